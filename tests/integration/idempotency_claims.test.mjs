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

// An instance killed after its write committed but before it kept the reply for the key left a
// claim that the retry took over as stale, and the retry wrote again. The state such an
// instance leaves is made here from a real write: its claim back to pending, its session gone.
test('a stale claim whose write committed answers "reply lost" instead of writing again', async () => {
  const srv = await startServer();
  try {
    const admin = mintToken(srv, 'admin');
    const body = { name: 'written-once' };
    // (a client may choose X-Request-Id, and reuse it: it plays no part in this)
    const first = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body, headers: { 'Idempotency-Key': 'lost-reply', 'X-Request-Id': 'reused-id' } });
    assert.equal(first.status, 201, first.text);
    // the claim's nonce, drawn by the server, is on the write's audit row
    assert.equal(psql(`SELECT count(*) FROM audit_event e JOIN idempotency i ON i.claim_nonce = e.idem_claim
      WHERE i.key = 'lost-reply' AND e.action = 'team.create'`, { database: srv.db }), '1');
    psql("UPDATE idempotency SET status = NULL, response = NULL, claim_pid = 0 WHERE key = 'lost-reply'", { database: srv.db });
    for (let i = 0; i < 2; i++) {
      const retry = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body, headers: { 'Idempotency-Key': 'lost-reply' } });
      assert.equal(retry.status, 409, retry.text);
      assert.match(retry.headers['content-type'], /application\/problem\+json/);
      assert.match(retry.json.type, /idempotency-reply-lost$/);
      assert.equal(retry.json.action, 'team.create');
      assert.equal(retry.json.target_id, first.json.id);
    }
    // the same key with another body is a reused key, as ever
    const other = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'another' }, headers: { 'Idempotency-Key': 'lost-reply' } });
    assert.equal(other.status, 409, other.text);
    assert.match(other.json.type, /idempotency-key-reused$/);
    assert.equal(psql("SELECT count(*) FROM audit_event WHERE action = 'team.create' AND change->>'name' = 'written-once'", { database: srv.db }), '1');

    // A stale claim whose request wrote nothing is taken over (the retry writes), even when an
    // earlier write of another user carried the same X-Request-Id.
    const other_user = mintToken(srv, 'admin');
    const victim = await api(srv.url, 'POST', '/api/v1/teams', { token: other_user, body: { name: 'victims-team' }, headers: { 'X-Request-Id': 'victim-0001' } });
    assert.equal(victim.status, 201, victim.text);
    psql(`INSERT INTO idempotency (user_id, key, route, claim_pid, claim_backend_start, claim_nonce)
          SELECT user_id, 'nothing-written', route, 0, now(), '${'ab'.repeat(16)}' FROM idempotency WHERE key = 'lost-reply'`, { database: srv.db });
    const fresh = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'written-now' }, headers: { 'Idempotency-Key': 'nothing-written', 'X-Request-Id': 'victim-0001' } });
    assert.equal(fresh.status, 201, fresh.text);
    assert.equal(fresh.json.name, 'written-now');
  } finally {
    await srv.stop();
  }
});
