// api/openapi.yaml must describe exactly the routes in the router: every METHOD PATH of
// `capledger routes` is an operation of the spec, and every operation of the spec is routed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectDir, startServer } from './lib/harness.mjs';

const bin = process.env.CAPLEDGER_BIN || path.join(projectDir, 'build', 'capledger');

function routerOperations() {
  const r = spawnSync(bin, ['routes'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').map((line) => {
    const [method, pattern] = line.split(' ');
    return `${method} ${pattern}`;
  });
}

test('every routed operation is in api/openapi.yaml and the other way round', () => {
  const routed = new Set(routerOperations());
  const specified = new Set(Object.keys(specResponseCodes()));
  assert.ok(routed.size > 0 && specified.size > 0);
  const missingFromSpec = [...routed].filter((op) => !specified.has(op));
  const notRouted = [...specified].filter((op) => !routed.has(op));
  assert.deepEqual(missingFromSpec, [], 'routes the spec does not describe');
  assert.deepEqual(notRouted, [], 'spec operations the router does not serve');
});

// The spec is written by us in a fixed layout (two-space indents): paths at indent 2 under
// `paths:`, methods at indent 4, response codes ('NNN':) at indent 8. Parsing that layout keeps
// the test free of dependencies. Each operation "METHOD /path" → the codes it declares.
function specResponseCodes() {
  const text = fs.readFileSync(path.join(projectDir, 'api/openapi.yaml'), 'utf8');
  const codes = {};
  let inPaths = false;
  let current = null;
  let op = null;
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) inPaths = line.startsWith('paths:');
    if (!inPaths) continue;
    const p = line.match(/^ {2}(\/\S*):\s*$/);
    if (p) { current = p[1]; op = null; continue; }
    const m = line.match(/^ {4}(get|put|post|delete|patch|head|options):\s*$/);
    if (m && current) { op = `${m[1].toUpperCase()} ${current}`; codes[op] = []; continue; }
    const c = line.match(/^ {8}'(\d{3})':/);
    if (c && op) codes[op].push(c[1]);
  }
  return codes;
}

test('every read the hot standby may answer declares its 503', () => {
  // Such a read asks the primary's position first and answers 503 (unavailable, Retry-After)
  // when it cannot: the route flag (capledger routes --standby) and the spec must agree.
  const r = spawnSync(bin, ['routes', '--standby'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const standby = r.stdout.trim().split('\n');
  assert.ok(standby.length > 10, r.stdout);
  const codes = specResponseCodes();
  assert.deepEqual(standby.filter((op) => !(codes[op] ?? []).includes('503')), []);
});

// The query parameters of each operation: `in: query` parameters, inline (flow style
// `- {name: x, in: query, …}` or block style) or by $ref to components/parameters.
export function specQueryParams(text) {
  const lines = text.split('\n');
  const comps = {};
  let inComp = false;
  let cur = null;
  for (const line of lines) {
    if (/^ {2}parameters:\s*$/.test(line)) { inComp = true; continue; }
    if (inComp && /^ {2}\S/.test(line)) inComp = false;
    if (!inComp) continue;
    const m = line.match(/^ {4}([A-Za-z0-9_]+):\s*$/);
    if (m) { cur = comps[m[1]] = {}; continue; }
    const f = line.match(/^ {6}(name|in):\s*(\S+)\s*$/);
    if (f && cur) cur[f[1]] = f[2];
  }
  const ops = {};
  let inPaths = false;
  let p = null;
  let op = null;
  let inParams = false;
  let item = null;
  const flush = () => { if (item && op && item.in === 'query') ops[op].add(item.name); item = null; };
  for (const line of lines) {
    if (/^\S/.test(line)) { flush(); inPaths = line.startsWith('paths:'); continue; }
    if (!inPaths) continue;
    const pm = line.match(/^ {2}(\/\S*):\s*$/);
    if (pm) { flush(); p = pm[1]; op = null; continue; }
    const mm = line.match(/^ {4}(get|put|post|delete|patch):\s*$/);
    if (mm && p) { flush(); op = `${mm[1].toUpperCase()} ${p}`; ops[op] = new Set(); inParams = false; continue; }
    if (/^ {6}parameters:\s*$/.test(line)) { inParams = true; continue; }
    if (/^ {6}\S/.test(line)) { flush(); inParams = false; continue; }
    if (!inParams || !op) continue;
    const ref = line.match(/^ {8}- \$ref: '#\/components\/parameters\/([A-Za-z0-9_]+)'/);
    if (ref) { flush(); if (comps[ref[1]]?.in === 'query') ops[op].add(comps[ref[1]].name); continue; }
    const flow = line.match(/^ {8}- \{name: ([^,]+), in: ([a-z]+)/);
    if (flow) { flush(); if (flow[2] === 'query') ops[op].add(flow[1].trim()); continue; }
    const start = line.match(/^ {8}- (name|in):\s*(\S+)/);
    if (start) { flush(); item = { [start[1]]: start[2] }; continue; }
    const f = line.match(/^ {10}(name|in):\s*(\S+)\s*$/);
    if (f && item) item[f[1]] = f[2];
  }
  flush();
  return ops;
}

test('every route takes exactly the query parameters api/openapi.yaml declares for it', () => {
  const r = spawnSync(bin, ['routes', '--query'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const spec = specQueryParams(fs.readFileSync(path.join(projectDir, 'api/openapi.yaml'), 'utf8'));
  const differ = [];
  for (const line of r.stdout.trim().split('\n')) {
    const [method, pattern, , query] = line.split(' ');
    const routed = query === '-' ? [] : query.split(',').sort();
    const declared = [...(spec[`${method} ${pattern}`] || [])].sort();
    if (routed.join(',') !== declared.join(',')) differ.push(`${method} ${pattern}: router [${routed}] spec [${declared}]`);
  }
  assert.deepEqual(differ, []);
});

test('the server serves the same spec at /api/v1/openapi.yaml', async () => {
  const srv = await startServer();
  try {
    const res = await fetch(`${srv.url}/api/v1/openapi.yaml`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /yaml/);
    const body = await res.text();
    assert.equal(body, fs.readFileSync(path.join(projectDir, 'api/openapi.yaml'), 'utf8'));
  } finally {
    await srv.stop();
  }
});
