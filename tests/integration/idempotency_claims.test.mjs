// An Idempotency-Key claim names the database session that made it (pg_backend_pid and its
// start): a claim whose session is gone (its instance died mid-request) is taken over by the
// retry at once; a claim whose session lives is still "in progress" (409).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';

test('a claim left by a dead session is taken over; a live one is in progress', async () => {
  const srv = await startServer();
  try {
    const admin = mintToken(srv, 'admin');
    const uid = psql("SELECT id FROM app_user WHERE username = 'admin'", { database: srv.db });
    // A session that no longer exists: pid 0 is never a backend's.
    psql(`INSERT INTO idempotency (user_id, key, route, claim_pid, claim_backend_start)
          VALUES ('${uid}', 'dead-claim', 'POST /api/v1/teams', 0, now() - interval '1 minute')`, { database: srv.db });
    const r = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'taken-over' }, headers: { 'Idempotency-Key': 'dead-claim' } });
    assert.equal(r.status, 201, r.text);
    const again = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'taken-over' }, headers: { 'Idempotency-Key': 'dead-claim' } });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers['idempotency-replayed'], 'true');
    // A live session's claim (this psql's own backend, alive while the statement runs, is gone
    // after it: use a backend that stays, the server's own pooled connection).
    const live = psql(`SELECT pid || '|' || backend_start FROM pg_stat_activity WHERE datname = '${srv.db}' AND application_name = 'capledger' LIMIT 1`);
    const [pid, started] = live.split('|');
    psql(`INSERT INTO idempotency (user_id, key, route, claim_pid, claim_backend_start)
          VALUES ('${uid}', 'live-claim', 'POST /api/v1/teams', ${pid}, '${started}')`, { database: srv.db });
    const t0 = Date.now();
    const busy = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'still-busy' }, headers: { 'Idempotency-Key': 'live-claim' } });
    assert.equal(busy.status, 409, busy.text);
    // It waited up to 1.5 s for the first request's answer before saying it is still in flight
    // (a retry sent to another instance while the first finishes then gets that answer).
    assert.ok(Date.now() - t0 >= 1400, `answered after ${Date.now() - t0} ms`);
    assert.match(busy.text, /idempotency-in-progress/);
  } finally {
    await srv.stop();
  }
});
