// An Idempotency-Key claim names the database session that made it (pg_backend_pid and its
// start): a claim whose session is gone (its instance died mid-request) is taken over by the
// retry at once; a claim whose session lives is still "in progress" (409).
import { test } from 'node:test';
import net from 'node:net';
import assert from 'node:assert/strict';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addUser } from './ledger.lib.mjs';

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

// A write still running when a retry settles its claim must not commit. Here the claim is made
// stale by age (15 minutes) while its request is alive, sending its body slowly; the retry
// takes the key over and stores the upload; then the first request's body ends: its write is
// refused (503), the key keeps the retry's reply, and the file is stored once (before, the
// first request also stored an upload record, every run a duplicate, and its idem_end deleted
// the retry's claim).
test('a write whose claim a retry settled meanwhile does not commit', async () => {
  const srv = await startServer();
  try {
    const admin = addUser(srv, 'uploader', 'owner').token;
    const lines = ['JobID|JobIDRaw|User|Account|Partition|State|Submit|Start|End|ExitCode|AllocTRES'];
    for (let i = 0; i < 3000; i++)
      lines.push(`${7000 + i}|${7000 + i}|u1|vision|gpu|COMPLETED|2025-03-01T00:00:00|2025-03-01T00:01:00|2025-03-01T01:00:00|0:0|billing=8,cpu=8,gres/gpu=2`);
    const body = Buffer.from(lines.join('\n') + '\n');
    // the first request sends its header line only: no run parsed yet, so it holds no lock on
    // the cluster that the retry would wait for
    const half = lines[0].length + 1;
    const { hostname, port } = new URL(srv.url);
    const sock = net.connect({ host: hostname, port: Number(port) });
    const reply = new Promise((resolve) => {
      const chunks = [];
      sock.on('data', (c) => chunks.push(c));
      sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      sock.on('error', () => resolve(Buffer.concat(chunks).toString('latin1')));
    });
    await new Promise((resolve) => sock.on('connect', resolve));
    sock.write(`POST /api/v1/runs?cluster=guarded HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin}\r\n` +
      `Content-Type: text/csv\r\nIdempotency-Key: slow-first\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
    sock.write(body.subarray(0, half));
    let claimed = '0';
    for (let i = 0; i < 50 && claimed === '0'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      claimed = psql("SELECT count(*) FROM idempotency WHERE key = 'slow-first' AND status IS NULL", { database: srv.db });
    }
    assert.equal(claimed, '1');
    psql("UPDATE idempotency SET created_at = now() - interval '1 hour' WHERE key = 'slow-first'", { database: srv.db });
    const retry = await api(srv.url, 'POST', '/api/v1/runs?cluster=guarded', { token: admin, body, headers: { 'Content-Type': 'text/csv', 'Idempotency-Key': 'slow-first' } });
    assert.equal(retry.status, 201, retry.text);
    assert.equal(retry.json.inserted, 3000);
    sock.write(body.subarray(half));
    const first = await reply;
    assert.match(first, /^HTTP\/1\.1 503 /, first.slice(0, 400));
    assert.equal(psql("SELECT count(*) FROM upload WHERE params->>'cluster' = 'guarded'", { database: srv.db }), '1');
    assert.equal(psql("SELECT count(*) FROM run WHERE cluster = 'guarded'", { database: srv.db }), '3000');
    const again = await api(srv.url, 'POST', '/api/v1/runs?cluster=guarded', { token: admin, body, headers: { 'Content-Type': 'text/csv', 'Idempotency-Key': 'slow-first' } });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers['idempotency-replayed'], 'true');
    assert.equal(again.json.id, retry.json.id);
  } finally {
    await srv.stop();
  }
});

// A stale claim whose write committed stays "reply lost" whatever route the next request with
// the key names: a request on the decisions route (whose own retries are answered by its
// handler) used to forget it, and the original route then wrote again.
test('a committed stale claim is not forgotten by a request on another route', async () => {
  const srv = await startServer();
  try {
    const admin = mintToken(srv, 'admin');
    assert.equal((await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'f1team' } })).status, 201);
    const owner = addUser(srv, 'f1owner', 'owner').token;
    const body = { team: 'f1team', name: 'w1', kind: 'training', class: 'production' };
    const headers = { 'Idempotency-Key': 'cross-route' };
    const first = await api(srv.url, 'POST', '/api/v1/workloads', { token: owner, body, headers });
    assert.equal(first.status, 201, first.text);
    psql("UPDATE idempotency SET status = NULL, response = NULL, claim_pid = 0 WHERE key = 'cross-route'", { database: srv.db });
    const other = await api(srv.url, 'POST', '/api/v1/decisions', { token: owner, body: {}, headers });
    assert.equal(other.status, 409, other.text);
    assert.match(other.json.type, /idempotency-key-reused$/);
    const retry = await api(srv.url, 'POST', '/api/v1/workloads', { token: owner, body, headers });
    assert.equal(retry.status, 409, retry.text);
    assert.match(retry.json.type, /idempotency-reply-lost$/);
    assert.equal(retry.json.target_id, first.json.id);
    assert.equal(psql("SELECT count(*) FROM workload WHERE name = 'w1'", { database: srv.db }), '1');
  } finally {
    await srv.stop();
  }
});

// Requests with one key sent at once: one does the work, the others wait for its answer and
// replay it (a request that met a claim committed a moment before its own statement began was
// answered 409 "in progress" at once, without waiting).
test('concurrent requests with one key all get the one reply', async () => {
  const srv = await startServer();
  try {
    const admin = mintToken(srv, 'admin');
    for (let round = 0; round < 10; round++) {
      const headers = { 'Idempotency-Key': `together-${round}` };
      const replies = await Promise.all(Array.from({ length: 8 }, () =>
        api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: `together-${round}` }, headers })));
      assert.deepEqual(replies.map((r) => r.status), Array(8).fill(201), replies.map((r) => r.text).join('\n'));
      assert.equal(new Set(replies.map((r) => r.json.id)).size, 1);
    }
    assert.equal(psql("SELECT count(*) FROM team WHERE name LIKE 'together-%'", { database: srv.db }), '10');
  } finally {
    await srv.stop();
  }
});
