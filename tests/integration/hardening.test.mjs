// Hardening (issue 9): input that used to crash or stall the server. Each test sends what the
// hostile pass sent and checks the answer and that the server is still up afterwards.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';
import { cli, mintToken } from './lib/cli.mjs';

let srv;
let owner; // owner API token
before(async () => {
  srv = await startServer();
  const u = cli(srv, ['user', 'add', 'olga', '--role', 'owner'], { input: 'olga has a long password 1\n' });
  assert.equal(u.status, 0, u.stderr);
  owner = mintToken(srv, 'olga');
});
after(async () => { await srv?.stop(); });

const alive = async () => {
  assert.equal(srv.exited, null, 'the server process is still running');
  const h = await api(srv.url, 'GET', '/healthz', { timeoutMs: 2_000 });
  assert.equal(h.status, 200);
};

const isProblem = (res, status, type) => {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers['content-type'], /^application\/problem\+json/);
  if (type) assert.equal(res.json.type, `https://capledger.dev/problems/${type}`);
};

describe('nesting depth', () => {
  const deep = (n) => '['.repeat(n) + ']'.repeat(n);

  test('a body nested 1,000 deep to POST /session is 400 naming the limit; the server lives', async () => {
    for (const body of [deep(1000), '{"a":'.repeat(1000) + '1' + '}'.repeat(1000), '['.repeat(100_000)]) {
      const r = await api(srv.url, 'POST', '/api/v1/session', { body, headers: { 'Content-Type': 'application/json' } });
      isProblem(r, 400, 'too-deep');
      assert.match(r.json.detail, /at most 64 levels/);
      await alive();
    }
  });

  test('64 levels parse; 65 do not', async () => {
    const ok = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: deep(64), headers: { 'Content-Type': 'application/json' } });
    assert.equal(ok.status, 422, ok.text); // parsed, then refused as a scenario
    const no = await api(srv.url, 'POST', '/api/v1/compare', { token: owner, body: deep(65), headers: { 'Content-Type': 'application/json' } });
    isProblem(no, 400, 'too-deep');
    assert.match(no.json.detail, /line 1, column 65/);
  });

  test('brackets inside strings do not count', async () => {
    const r = await api(srv.url, 'POST', '/api/v1/session', { body: { username: '['.repeat(5000), password: '{'.repeat(100) } });
    assert.equal(r.status === 400 && r.json.type.endsWith('too-deep'), false, r.text);
  });

  test('an NDJSON upload line nested 1,000 deep is 400 naming its line; nothing is stored', async () => {
    const good = JSON.stringify({ job_id: '1', user: 'u', account: 'a', state: 'COMPLETED', gpus: 1,
                                  submit: '2025-01-01T00:00:00Z', start: '2025-01-01T00:00:00Z', end: '2025-01-01T01:00:00Z' });
    const body = `${good}\n${deep(1000)}\n`;
    const r = await api(srv.url, 'POST', '/api/v1/runs?cluster=c1', { token: owner, body, headers: { 'Content-Type': 'application/x-ndjson' } });
    isProblem(r, 400, 'too-deep');
    assert.match(r.json.detail, /line 2\b/);
    const list = await api(srv.url, 'GET', '/api/v1/runs', { token: owner });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.json.items.length, 0);
    await alive();
  });

  test('a load-test import nested 1,000 deep is 400', async () => {
    const r = await api(srv.url, 'POST', '/api/v1/benchmarks/import?format=vllm&workload_id=00000000-0000-0000-0000-000000000000&offer_id=00000000-0000-0000-0000-000000000000',
                        { token: owner, body: '{"a":' + deep(1000) + '}', headers: { 'Content-Type': 'application/json' } });
    assert.ok(r.status === 400 || r.status === 404 || r.status === 422, r.text);
    assert.notEqual(r.status >= 500, true);
    await alive();
  });

  test('the workers got the stack size the server asked for', () => {
    const line = srv.stderrLines().map((l) => { try { return JSON.parse(l); } catch { return {}; } })
      .find((l) => l.msg === 'listening');
    assert.ok(line.worker_stack_bytes >= 1024 * 1024, JSON.stringify(line));
  });
});
