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

// The spec is written by us in a fixed layout (two-space indents): paths at indent 2 under
// `paths:`, methods at indent 4. Parsing that layout keeps the test free of dependencies.
function specOperations() {
  const text = fs.readFileSync(path.join(projectDir, 'api/openapi.yaml'), 'utf8');
  const ops = [];
  let inPaths = false;
  let current = null;
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) inPaths = line.startsWith('paths:');
    if (!inPaths) continue;
    const p = line.match(/^ {2}(\/\S*):\s*$/);
    if (p) { current = p[1]; continue; }
    const m = line.match(/^ {4}(get|put|post|delete|patch|head|options):\s*$/);
    if (m && current) ops.push(`${m[1].toUpperCase()} ${current}`);
  }
  return ops;
}

test('every routed operation is in api/openapi.yaml and the other way round', () => {
  const routed = new Set(routerOperations());
  const specified = new Set(specOperations());
  assert.ok(routed.size > 0 && specified.size > 0);
  const missingFromSpec = [...routed].filter((op) => !specified.has(op));
  const notRouted = [...specified].filter((op) => !routed.has(op));
  assert.deepEqual(missingFromSpec, [], 'routes the spec does not describe');
  assert.deepEqual(notRouted, [], 'spec operations the router does not serve');
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
