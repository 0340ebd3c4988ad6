// Hardening (issue 9): a hostile-input sweep. Every route that takes a body (read from the
// route table, `capledger routes`) gets generated malformed bodies — truncated, mistyped,
// deeply nested, huge numbers, bad UTF-8, duplicate keys, garbage — at least 1,000 in all,
// from a seeded generator (the same bodies every run). No answer may be a 5xx, and the server
// must be alive and answering afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';
import { cli, mintToken } from './lib/cli.mjs';
import { rawExchange } from './lib/raw.mjs';

const BODIES_PER_ROUTE = 44;
const PARALLEL = 6;

let srv;
const tokens = {};
let routes = [];
before(async () => {
  srv = await startServer();
  tokens.admin = mintToken(srv, 'admin');
  for (const [name, role] of [['hoss', 'owner'], ['haud', 'auditor']]) {
    const u = cli(srv, ['user', 'add', name, '--role', role], { input: `${name} has a long password 1\n` });
    assert.equal(u.status, 0, u.stderr);
    tokens[role] = mintToken(srv, name);
  }
  const listed = cli(srv, ['routes']);
  assert.equal(listed.status, 0, listed.stderr);
  routes = listed.stdout.trim().split('\n').map((l) => l.split(' '))
    .filter(([method]) => ['POST', 'PUT', 'PATCH'].includes(method))
    .map(([method, pattern, roles]) => ({ method, pattern, roles: roles.split(',') }));
});
after(async () => { await srv?.stop(); });

// mulberry32: a small seeded generator, so a failure can be replayed.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = ['name', 'team', 'kind', 'class', 'price_per_hour', 'workload_ids', 'document', 'options', 'username',
  'password', 'role', 'teams', 'title', 'started_on', 'evidence', 'url', 'events', 'workload', 'assumptions', 'trials',
  'offer', 'benchmark', 'dataset_gb', 'status', 'review_id', 'decision', 'public_key', 'label', 'expires_in_days',
  'load_points', 'gpus', 'measured_at', 'workload_id', 'offer_id', '', '\u0000', 'a'.repeat(300)];
const NUMBERS = ['0', '-0', '1e308', '-1e308', '1e400', '9007199254740993', '1.5', '-1', '2e15', '1e-400', '123456789012345678901234567890', '0.1e1', '5e-324'];
const STRINGS = ['""', '"x"', `"${'y'.repeat(20000)}"`, '"\\u0000"', '"\\ud800"', '"\\udc00\\ud800"', '"é"', '"2026-02-30"', '"../../etc/passwd"', '"<script>"', '"00000000-0000-0000-0000-000000000000"'];

function value(rnd, depth) {
  const r = rnd();
  if (depth > 3 || r < 0.35) return NUMBERS[Math.floor(rnd() * NUMBERS.length)];
  if (r < 0.6) return STRINGS[Math.floor(rnd() * STRINGS.length)];
  if (r < 0.7) return ['null', 'true', 'false'][Math.floor(rnd() * 3)];
  if (r < 0.85) return `[${Array.from({ length: Math.floor(rnd() * 4) }, () => value(rnd, depth + 1)).join(',')}]`;
  return object(rnd, depth + 1);
}

function object(rnd, depth = 0) {
  const n = Math.floor(rnd() * 6);
  const members = Array.from({ length: n }, () => `${JSON.stringify(KEYS[Math.floor(rnd() * KEYS.length)])}:${value(rnd, depth)}`);
  return `{${members.join(',')}}`;
}

// One malformed body: a random document, then one of the ways hostile bodies go wrong.
function body(rnd) {
  const doc = object(rnd);
  const cut = Math.floor(rnd() * doc.length);
  const deep = 65 + Math.floor(rnd() * 3000);
  const kinds = [
    () => Buffer.from(doc), // well-formed but wrong in content
    () => Buffer.from(doc.slice(0, cut)), // truncated
    () => Buffer.from('['.repeat(deep) + ']'.repeat(deep)),
    () => Buffer.from('{"a":'.repeat(deep) + '1' + '}'.repeat(deep)),
    () => Buffer.from(`{"a":1,"a":2,${doc.slice(1)}`), // duplicate keys
    () => Buffer.concat([Buffer.from(doc.slice(0, cut)), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from(doc.slice(cut))]),
    () => Buffer.from(doc.replace(/:/, ':NaN,"b":Infinity,"c":')),
    () => Buffer.from(Array.from({ length: 256 + Math.floor(rnd() * 2048) }, () => Math.floor(rnd() * 256))),
    () => Buffer.from(''),
    () => Buffer.from(' \n\t '),
    () => Buffer.from(NUMBERS[Math.floor(rnd() * NUMBERS.length)]),
    () => Buffer.from(`[${Array(2000).fill('1e308').join(',')}]`),
    () => Buffer.from(`\ufeff${doc}`),
    () => Buffer.from(`${doc}${doc}`),
    () => Buffer.from(doc.replaceAll('"', "'")),
  ];
  return kinds[Math.floor(rnd() * kinds.length)]();
}

const PARAMS = ['00000000-0000-0000-0000-000000000000', 'nonexistent', '0'.repeat(64), 'x'.repeat(300), '%C3%28', '1'];

test(`≥1,000 generated malformed bodies across every route that takes one: no 5xx, the server lives`, async () => {
  assert.ok(routes.length >= 15, `only ${routes.length} routes with a body`);
  const rnd = prng(9);
  const jobs = [];
  for (const rt of routes) {
    const role = ['owner', 'admin', 'auditor', 'anonymous'].find((r) => rt.roles.includes(r));
    for (let i = 0; i < BODIES_PER_ROUTE; i++) {
      const path = rt.pattern.replace(/\{[^}]+\}/g, () => PARAMS[Math.floor(rnd() * PARAMS.length)]);
      // Mostly JSON, so the bodies reach the parsers; now and then what the uploads take.
      const other = rt.method === 'PATCH' ? 'application/merge-patch+json' : ['text/csv', 'application/x-ndjson'][Math.floor(rnd() * 2)];
      const headers = { 'Content-Type': rnd() < 0.85 ? 'application/json' : other };
      if (rt.method === 'PATCH' && rnd() < 0.5) headers['If-Match'] = '"v1"';
      jobs.push({ method: rt.method, path, body: body(rnd), headers, token: role === 'anonymous' ? undefined : tokens[role] });
    }
  }
  assert.ok(jobs.length >= 1000, `${jobs.length} bodies`);
  const failures = [];
  const statuses = new Map();
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < jobs.length) {
      const j = jobs[next++];
      const r = await api(srv.url, j.method, j.path, { body: j.body, headers: j.headers, token: j.token, timeoutMs: 30_000 });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status >= 500) failures.push(`${j.method} ${j.path} ${j.headers['Content-Type']} → ${r.status} ${r.text.slice(0, 200)} (body ${j.body.subarray(0, 80).toString('latin1')}…)`);
    }
  }));
  console.log(`# ${jobs.length} malformed bodies over ${routes.length} routes in ${(performance.now() - t0).toFixed(0)} ms: ` +
              [...statuses].sort().map(([s, n]) => `${s}×${n}`).join(' '));
  assert.deepEqual(failures, []);
  assert.equal(srv.exited, null, 'the server is still running');
  const h = await api(srv.url, 'GET', '/healthz', { timeoutMs: 2_000 });
  assert.equal(h.status, 200);
  const me = await api(srv.url, 'GET', '/api/v1/me', { token: tokens.owner });
  assert.equal(me.status, 200, me.text);
});

test('headers that are not UTF-8, quoted back in a problem, are 4xx (fuzz_request found a 500)', async () => {
  const body = '{"username":"a","password":"a long one 1"}';
  const head = Buffer.from(`POST /api/v1/session HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length}\r\nContent-Type: applicatio`, 'latin1');
  const r = await rawExchange(srv.url, Buffer.concat([head, Buffer.from([0xa4]), Buffer.from(`/json\r\n\r\n${body}`)]));
  assert.match(r.text, /^HTTP\/1\.1 415 /, r.text);
  assert.match(r.text, /not 'applicatio\?\/json'/);
});
