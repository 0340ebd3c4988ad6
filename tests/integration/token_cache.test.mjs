// Token-authenticated reads (issue 13): a resolved token is reused for at most
// CAPLEDGER_TOKEN_CACHE_MS (1 s), so reads neither write last_used_at on every request (which
// serialised them on the token's row lock and wrote WAL) nor look the token up each time; and a
// token revoked on one instance is refused by every instance within that second.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, psql, startServer, withDatabase } from './lib/harness.mjs';
import { addUser } from './ledger.lib.mjs';

let a, b;
before(async () => {
  a = await startServer();
  // A second instance of the same deployment: same database, same log key.
  b = await startServer({ env: {
    CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, a.db),
    CAPLEDGER_KEY_FILE: a.keyFile,
  } });
});
after(async () => { await b?.stop(); await a?.stop(); });

const tokenRow = (id) => psql(`SELECT coalesce(last_used_at::text, 'never') FROM api_token WHERE id = '${id}'`, { database: a.db }).trim();

test('reads do not write the token row on every request: last_used_at moves at most once a minute', async () => {
  const u = addUser(a, 'reader', 'auditor');
  const me = await api(a.url, 'GET', '/api/v1/me', { token: u.token });
  assert.equal(me.status, 200, me.text);
  const list = await api(a.url, 'GET', '/api/v1/tokens', { token: u.token });
  const id = list.json.items[0].id;
  const first = tokenRow(id);
  assert.notEqual(first, 'never', 'the first use is recorded');
  // Spread over more than the cache's second on both instances, so the database is asked again.
  for (let i = 0; i < 6; i++) {
    for (const s of [a, b]) assert.equal((await api(s.url, 'GET', '/api/v1/me', { token: u.token })).status, 200);
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(tokenRow(id), first, 'last_used_at was rewritten within the minute');
});

test('a token revoked on one instance is refused by the other within 1 s, and at once by the first', async () => {
  const u = addUser(a, 'piper', 'auditor');
  for (const s of [a, b]) assert.equal((await api(s.url, 'GET', '/api/v1/me', { token: u.token })).status, 200); // cached on both
  const list = await api(a.url, 'GET', '/api/v1/tokens', { token: u.token });
  const id = list.json.items[0].id;
  const del = await api(a.url, 'DELETE', `/api/v1/tokens/${id}`, { token: u.token });
  assert.equal(del.status, 204, del.text);
  const revokedAt = Date.now();
  assert.equal((await api(a.url, 'GET', '/api/v1/me', { token: u.token })).status, 401, 'the revoking instance forgets at once');
  const seen = [];
  while (Date.now() - revokedAt < 1600) {
    const sentAt = Date.now();
    const r = await api(b.url, 'GET', '/api/v1/me', { token: u.token });
    seen.push({ after: sentAt - revokedAt, status: r.status });
  }
  const late = seen.filter((s) => s.after >= 1000);
  assert.ok(late.length > 0, JSON.stringify(seen));
  assert.ok(late.every((s) => s.status === 401), `requests sent 1 s after the revocation still served: ${JSON.stringify(late)}`);
  assert.ok(seen.every((s) => s.status === 200 || s.status === 401), JSON.stringify(seen));
});

test('CAPLEDGER_TOKEN_CACHE_MS=0 turns the cache off; a value above 1000 is refused at start', async () => {
  const u = addUser(a, 'noah', 'auditor');
  const c = await startServer({ env: {
    CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, a.db),
    CAPLEDGER_KEY_FILE: a.keyFile, CAPLEDGER_TOKEN_CACHE_MS: '0',
  } });
  try {
    assert.equal((await api(c.url, 'GET', '/api/v1/me', { token: u.token })).status, 200);
    psql(`UPDATE api_token SET revoked_at = now() WHERE user_id = (SELECT id FROM app_user WHERE username = 'noah')`, { database: a.db });
    assert.equal((await api(c.url, 'GET', '/api/v1/me', { token: u.token })).status, 401, 'no cache: refused on the next request');
  } finally {
    await c.stop();
  }
  const { spawnSync } = await import('node:child_process');
  const { bin } = await import('./lib/cli.mjs');
  const bad = spawnSync(bin, ['config'], { env: { ...process.env, CAPLEDGER_TOKEN_CACHE_MS: '5000' }, encoding: 'utf8' });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /CAPLEDGER_TOKEN_CACHE_MS/);
});
