// What the adversarial pass on the direct runs ingest found (issue 13), each a regression test:
// slow uploads holding every database connection (503 for everyone while /healthz stayed 200);
// a cluster held by another upload answered "the database is unreachable", and a deadlock
// between two uploads 409 "conflicts with an existing record"; a line dated year 0000 failed
// the whole upload with a 422 naming nothing; a body declared over the limit was invited
// (100 Continue) and read before the 413.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { withDatabase } from './lib/harness.mjs';
import { rawExchange } from './lib/raw.mjs';
import { evidenceServer, text } from './evidence.lib.mjs';

let srv, as, tokens;
// a pool of 4: a quarter is 1 upload slot
before(async () => { ({ srv, as, tokens } = await evidenceServer({ env: { CAPLEDGER_DB_POOL: '4' } })); });
after(async () => { await srv?.stop(); });

const HEADER = 'JobID|JobIDRaw|User|Account|Partition|State|Submit|Start|End|ExitCode|AllocTRES';
const line = (id, day = '2025-03-01') => `${id}|${id}|u|vision|gpu|COMPLETED|${day}T10:00:00|${day}T10:01:00|${day}T11:00:00|0:0|gres/gpu=1`;

// An upload whose body trickles: the head and a first line, then nothing until release().
function slowUpload(token, cluster) {
  const { hostname, port } = new URL(srv.url);
  const req = http.request({
    host: hostname, port: Number(port), method: 'POST', path: `/api/v1/runs?cluster=${cluster}&team=vision`,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/csv', 'Transfer-Encoding': 'chunked' },
  });
  const done = new Promise((resolve) => {
    req.on('response', (res) => { let b = ''; res.on('data', (c) => { b += c; }); res.on('end', () => resolve({ status: res.statusCode, text: b })); });
    req.on('error', (e) => resolve({ status: 0, text: String(e) }));
  });
  req.write(`${HEADER}\n${line(`slow-${cluster}-1`)}\n`);
  return { release: (more = '') => { req.end(more); return done; }, done };
}

// A runs upload's head alone, asking Expect: 100-continue for a body of length bytes: what the
// server sends before it closes the connection (or goes quiet for 5 s).
async function expectHead(cluster, length) {
  const head = `POST /api/v1/runs?cluster=${cluster}&team=vision HTTP/1.1\r\nHost: x\r\n` +
    `Authorization: Bearer ${tokens.ana}\r\nContent-Type: text/csv\r\nContent-Length: ${length}\r\n` +
    'Expect: 100-continue\r\n\r\n';
  return (await rawExchange(srv.url, head, { quietMs: 5000 })).text;
}

test('slow uploads cannot take the database from everyone: a quarter of the pool at most, 2 per user', async () => {
  const first = slowUpload(tokens.ana, 'slow-a');
  await new Promise((r) => setTimeout(r, 500)); // it holds the one upload slot (and a connection)
  // another upload is told at once to retry, and everything else still answers
  const second = await as('bob', 'POST', '/runs?cluster=slow-b&team=nlp', text(`${HEADER}\n${line('b1').replace('vision', 'nlp')}\n`));
  assert.equal(second.status, 503, second.text);
  assert.ok(second.headers['retry-after'], 'a retryable refusal');
  assert.match(second.json.detail, /uploads/);
  for (const who of ['aud', 'owner1', 'bob']) {
    const me = await as(who, 'GET', '/me');
    assert.equal(me.status, 200, `${who}: ${me.text}`);
  }
  const ok = await first.release(`${line('slow-slow-a-2')}\n`);
  assert.equal(ok.status, 201, ok.text);
  const again = await as('bob', 'POST', '/runs?cluster=slow-b&team=nlp', text(`${HEADER}\n${line('b1').replace('vision', 'nlp')}\n`));
  assert.equal(again.status, 201, again.text);
});

test('uploads one after another never find their own previous slot still taken', async () => {
  // the slot went back after the handler, but the reply went out inside it: a client that sent
  // its next upload on reading the reply could be told 503 (seen under ASan)
  for (let i = 0; i < 40; i++) {
    const r = await as('ana', 'POST', `/runs?cluster=seq&team=vision`, text(`${HEADER}\n${line(`seq-${i}`)}\n`));
    assert.equal(r.status, 201, `upload ${i}: ${r.text}`);
  }
});

test('an upload refused for want of a slot, sent with Expect: 100-continue, is not invited: a prompt 503', async () => {
  const first = slowUpload(tokens.owner1, 'slot-held');
  await new Promise((r) => setTimeout(r, 500));
  const started = Date.now();
  const reply = await expectHead('waits', 50000000);
  assert.doesNotMatch(reply, /^HTTP\/1\.1 100/, 'invited to send a body that would only be drained');
  assert.match(reply, /^HTTP\/1\.1 503 /, reply.slice(0, 300));
  assert.ok(Date.now() - started < 4000, 'answered at once');
  assert.equal((await first.release()).status, 201);
});

test('a line dated in year 0000 is a faulty line named by number; the other lines are stored', async () => {
  const body = `${HEADER}\n${line('y1')}\n${line('y0', '0000-01-01')}\n`;
  const r = await as('ana', 'POST', '/runs?cluster=years&team=vision', text(body));
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.inserted, 1, r.text);
  assert.equal(r.json.rejected_lines, 1, r.text);
  assert.ok(r.json.rejected.some((e) => e.line === 3 && e.pointer === '/submitted_at'), r.text);
  const atomic = await as('ana', 'POST', '/runs?cluster=years2&team=vision&atomic=true', text(body));
  assert.equal(atomic.status, 422, atomic.text);
  assert.ok(atomic.json.errors.some((e) => e.line === 3), atomic.text);
});

test('a body declared over the upload limit is refused from its head: no 100 Continue, 413', async () => {
  const reply = await expectHead('huge', 99999999999);
  assert.doesNotMatch(reply, /^HTTP\/1\.1 100/, 'invited to send 100 GB');
  assert.match(reply, /^HTTP\/1\.1 413 /, reply.slice(0, 300));
});

test('an upload that meets a cluster another upload holds is a retryable 503 naming the contention', async () => {
  // a session that holds the cluster's lock for 40 s, as a slow upload to it does (the server
  // waits 30 s for it)
  const { spawn } = await import('node:child_process');
  const holder = spawn('psql', ['-X', '-q', '-d', withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, srv.db), '-c',
    "BEGIN; SELECT capledger_run_cluster_lock('held', '1 second'); SELECT pg_sleep(40); COMMIT;"], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const t0 = Date.now();
    const r = await as('ana', 'POST', '/runs?cluster=held&team=vision', { ...text(`${HEADER}\n${line('h1')}\n`), timeoutMs: 60_000 });
    assert.equal(r.status, 503, r.text);
    assert.ok(r.headers['retry-after'], 'retryable');
    assert.match(r.json.detail, /another upload/);
    assert.ok(Date.now() - t0 >= 25_000, 'it waited for the cluster first');
  } finally {
    holder.kill();
  }
});
