// Webhooks: owners' and admins' alert destinations, the signed deliveries from the outbox, the
// retries with backoff against a receiver that fails the first tries, the idempotency id, the
// delivered / failing state, SSRF refusals, and two server instances never posting one row twice.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import {
  addOwner, addUser, buildEvidence, createReview, leafHash, merkleRoot, postDecision, record, runsOf, startTwin,
} from './ledger.lib.mjs';

let srv;
let admin;
let olga;
let pavel;
let auditor;
let member;
let receiver;

const call = (method, p, who, body, headers) => api(srv.url, method, p, { token: who.token, body, headers });
const pointers = (r) => (r.json?.errors || []).map((e) => e.pointer).sort();
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// A local receiver: answers 500 to the first `failFirst` attempts of each webhook-id, then 200.
// Every request is recorded with its headers and raw body.
function startReceiver({ failFirst = 2 } = {}) {
  const requests = [];
  const seen = new Map();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      const n = (seen.get(id) || 0) + 1;
      seen.set(id, n);
      let status = n <= receiver.failFirst ? 500 : 200;
      if (req.url === '/redirect') status = 302;
      requests.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status, at: Date.now() });
      if (req.url === '/big') { // a 2xx with a long reply: the deliverer cuts it, the 200 stands
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(4 << 20, 120));
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain', ...(status === 302 ? { location: `${receiver.url}/olga?channel=capacity` } : {}) });
      res.end(status === 200 ? 'ok' : 'try again');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}`, requests, failFirst, close: () => new Promise((r) => server.close(r)),
  })));
}

// The Standard Webhooks check a receiver would run.
function verify(secret, headers, body) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`;
  const expected = `v1,${crypto.createHmac('sha256', key).update(signed).digest('base64')}`;
  return headers['webhook-signature'] === expected;
}

async function until(what, fn, { timeoutMs = 20_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

before(async () => {
  receiver = await startReceiver({ failFirst: 2 });
  // Retries 0.2 s, 0.4 s, … apart (the default first step is 15 s); drift checked every second.
  srv = await startServer({ env: { CAPLEDGER_WEBHOOK_RETRY_BASE_S: '0.2', CAPLEDGER_WEBHOOK_TIMEOUT_S: '2', CAPLEDGER_DRIFT_SWEEP_S: '1' } });
  admin = { name: 'admin', token: mintToken(srv, 'admin') };
  olga = await addOwner(srv, 'olga');
  pavel = await addOwner(srv, 'pavel');
  auditor = addUser(srv, 'audrey', 'auditor');
  assert.equal((await call('POST', '/api/v1/teams', admin, { name: 'vision' })).status, 201);
  member = addUser(srv, 'tom', 'team', ['vision']);
});
after(async () => {
  await srv?.stop();
  await receiver?.close();
});

test('bad webhooks are refused with a pointer per fault; only owners and admins may create them', async () => {
  const bad = await call('POST', '/api/v1/webhooks', olga, {
    url: 'gopher://127.0.0.1:6379/_FLUSHALL', events: ['drift', 'drift', 'pager'], format: 'xml', colour: 'red',
  });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(pointers(bad), ['/colour', '/events/1', '/events/2', '/format', '/url']);
  assert.match(bad.json.errors.find((e) => e.pointer === '/url').message, /only http and https/);
  for (const url of ['file:///etc/passwd', 'http://user:pw@example.com/', 'javascript:alert(1)', 'http://example.com:99999/', `http://x/${'a'.repeat(2048)}`]) {
    const r = await call('POST', '/api/v1/webhooks', olga, { url, events: ['drift'] });
    assert.equal(r.status, 422, url);
    assert.deepEqual(pointers(r), ['/url']);
  }
  assert.deepEqual(pointers(await call('POST', '/api/v1/webhooks', olga, { url: 'https://example.com/', events: [] })), ['/events']);
  assert.deepEqual(pointers(await call('POST', '/api/v1/webhooks', olga, { url: 'https://example.com/' })), ['/events']);
  assert.equal((await call('POST', '/api/v1/webhooks', olga, [])).status, 422);
  for (const who of [member, auditor]) {
    assert.equal((await call('POST', '/api/v1/webhooks', who, { url: 'https://example.com/', events: ['drift'] })).status, 403);
    assert.equal((await call('GET', '/api/v1/webhooks', who)).status, 403);
  }
  assert.deepEqual((await call('GET', '/api/v1/webhooks', olga)).json.items, []);
});

test('the secret is shown once; a ping retried after failures arrives signed, with one idempotency id', async () => {
  const created = await call('POST', '/api/v1/webhooks', olga, { url: `${receiver.url}/olga?channel=capacity`, events: ['drift'], description: 'capacity channel' });
  assert.equal(created.status, 201, created.text);
  const hook = created.json;
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(hook.owner, 'olga');
  assert.equal(hook.format, 'json');
  assert.deepEqual(hook.events, ['drift']);
  assert.deepEqual(hook.deliveries, { pending: 0, failing: 0, delivered: 0, failed: 0 });
  const got = await call('GET', `/api/v1/webhooks/${hook.id}`, olga);
  assert.equal(got.status, 200);
  assert.equal(got.json.secret, undefined);
  assert.ok(!got.text.includes(hook.secret.slice(6)));
  assert.ok(!(await call('GET', '/api/v1/webhooks', olga)).text.includes('whsec_'));
  // The audit trail has the webhook, without the secret and without the URL's path.
  const audit = await call('GET', '/api/v1/audit/events?limit=5', admin);
  const ev = audit.json.items.find((e) => e.action === 'webhook.create');
  assert.ok(ev, audit.text);
  assert.ok(!audit.text.includes('whsec_') && !audit.text.includes(hook.secret.slice(6)));
  assert.ok(!audit.text.includes('channel=capacity'));

  const ping = await call('POST', `/api/v1/webhooks/${hook.id}/ping`, olga);
  assert.equal(ping.status, 202, ping.text);
  assert.equal(ping.json.status, 'pending');
  assert.equal(ping.json.event, 'ping');
  assert.equal((await call('POST', `/api/v1/webhooks/${hook.id}/ping`, olga, { extra: 1 })).status, 422);

  const delivered = await until('the ping to be delivered', async () => {
    const d = (await call('GET', `/api/v1/webhooks/${hook.id}/deliveries`, olga)).json.items.find((x) => x.id === ping.json.id);
    return d?.status === 'delivered' ? d : null;
  });
  assert.equal(delivered.attempts, 3);
  assert.equal(delivered.last_status, 200);
  assert.equal(delivered.last_error, null);
  assert.equal(delivered.next_attempt_at, null);
  assert.ok(delivered.delivered_at);

  const tries = receiver.requests.filter((q) => q.headers['webhook-id'] === ping.json.id);
  assert.deepEqual(tries.map((q) => q.status), [500, 500, 200]);
  for (const q of tries) {
    assert.equal(q.path, '/olga?channel=capacity');
    assert.equal(q.headers['content-type'], 'application/json');
    assert.equal(q.headers['idempotency-key'], ping.json.id);
    assert.match(q.headers['user-agent'], /^capledger\//);
    assert.ok(verify(hook.secret, q.headers, q.body), 'signature verifies');
    assert.ok(!verify(hook.secret, q.headers, `${q.body} `), 'a changed body does not verify');
    assert.ok(Math.abs(Number(q.headers['webhook-timestamp']) * 1000 - q.at) < 5000);
    assert.deepEqual(JSON.parse(q.body).type, 'ping');
    // the webhook's events as an array, not a JSON text inside a string (issue 25, item 10)
    assert.deepEqual(JSON.parse(q.body).alert.events, ['drift'], q.body);
  }
  assert.equal(new Set(tries.map((q) => q.body)).size, 1, 'the same body on every attempt');
  // Exponential backoff: the second wait is longer than the first's lower bound (0.1 s, 0.2 s).
  assert.ok(tries[1].at - tries[0].at >= 90, `first wait ${tries[1].at - tries[0].at} ms`);
  assert.ok(tries[2].at - tries[1].at >= 190, `second wait ${tries[2].at - tries[1].at} ms`);

  const after = (await call('GET', `/api/v1/webhooks/${hook.id}`, olga)).json;
  assert.deepEqual(after.deliveries, { pending: 0, failing: 0, delivered: 1, failed: 0 });
  assert.equal(after.last_delivery.status, 'delivered');
  olga.hook = hook;
});

test('a drift alert is queued with the alert and reaches its owner\'s and the admins\' webhooks, not other owners\'', async () => {
  receiver.failFirst = 0;
  const slack = await call('POST', '/api/v1/webhooks', pavel, { url: `${receiver.url}/pavel`, events: ['drift'], format: 'slack' });
  assert.equal(slack.status, 201);
  const all = await call('POST', '/api/v1/webhooks', admin, { url: `${receiver.url}/admin`, events: ['drift', 'log_integrity'] });
  assert.equal(all.status, 201);
  const olgaSlack = await call('POST', '/api/v1/webhooks', olga, { url: `${receiver.url}/olga-slack`, events: ['drift'], format: 'slack' });
  assert.equal(olgaSlack.status, 201);

  const full = await buildEvidence(srv.url, admin, olga, { seed: 11 });
  const rv = await createReview(srv.url, olga, [full.workloadId], { title: 'webhook watch' });
  const dec = await postDecision(srv.url, olga, record(olga, rv.id, {
    decision: 'advance', chosen_option: 'h100-on-demand', comparison_sha256: [full.comparison.sha256],
  }));
  assert.equal(dec.status, 201, dec.text);
  const since = Date.now() + 2000;
  assert.equal((await call('POST', '/api/v1/runs', olga, runsOf(full.team, 'onprem', 24, { start: since, state: (i) => (i % 2 ? 'FAILED' : 'COMPLETED') }))).status, 201);

  const alerts = await until('drift alerts', async () => {
    const a = (await call('GET', `/api/v1/alerts?review=${rv.id}`, olga)).json.items;
    return a.length ? a : null;
  });
  const ids = new Set(alerts.map((a) => a.id));
  const arrived = await until('the alerts at olga\'s and the admin\'s webhooks', () => {
    const got = (p) => receiver.requests.filter((q) => q.path === p && q.headers['webhook-id'] && q.status === 200);
    const o = got('/olga?channel=capacity').filter((q) => JSON.parse(q.body).type === 'alert.drift');
    const a = got('/admin');
    const s = got('/olga-slack');
    return o.length >= ids.size && a.length >= ids.size && s.length >= ids.size ? { o, a, s } : null;
  });
  for (const q of arrived.o) {
    const doc = JSON.parse(q.body);
    assert.ok(ids.has(doc.alert.id));
    assert.equal(doc.alert.owner, 'olga');
    assert.equal(doc.alert.review_id, rv.id);
    assert.ok(verify(olga.hook.secret, q.headers, q.body));
  }
  for (const q of arrived.s) {
    const doc = JSON.parse(q.body);
    assert.deepEqual(Object.keys(doc), ['text']);
    assert.match(doc.text, new RegExp(`^capledger drift alert \\(review ${rv.id}, alert [0-9a-f-]{36}\\): `));
  }
  // Pavel's webhook hears nothing of olga's review.
  await sleep(500);
  assert.equal(receiver.requests.filter((q) => q.path === '/pavel').length, 0);
  const deliveries = (await call('GET', `/api/v1/webhooks/${olga.hook.id}/deliveries`, olga)).json.items;
  assert.ok(deliveries.filter((d) => d.event === 'drift').every((d) => ids.has(d.alert_id) && d.status === 'delivered'));

  // Another owner neither sees nor deletes olga's webhook; the admin sees every webhook.
  assert.equal((await call('GET', `/api/v1/webhooks/${olga.hook.id}`, pavel)).status, 404);
  assert.equal((await call('GET', `/api/v1/webhooks/${olga.hook.id}/deliveries`, pavel)).status, 404);
  assert.equal((await call('DELETE', `/api/v1/webhooks/${olga.hook.id}`, pavel)).status, 404);
  assert.equal((await call('POST', `/api/v1/webhooks/${olga.hook.id}/ping`, pavel)).status, 404);
  assert.deepEqual((await call('GET', '/api/v1/webhooks', pavel)).json.items.map((w) => w.id), [slack.json.id]);
  assert.ok((await call('GET', '/api/v1/webhooks', admin)).json.items.length >= 4);
  assert.equal((await call('GET', '/api/v1/webhooks/not-a-uuid', olga)).status, 404);
  // 25 webhooks per user at most.
  for (let i = (await call('GET', '/api/v1/webhooks', pavel)).json.items.length; i < 25; i++) {
    assert.equal((await call('POST', '/api/v1/webhooks', pavel, { url: `https://example.com/${i}`, events: ['log_integrity'] })).status, 201);
  }
  const over = await call('POST', '/api/v1/webhooks', pavel, { url: 'https://example.com/26', events: ['drift'] });
  assert.equal(over.status, 409, over.text);
  assert.match(over.json.detail, /25 webhooks/);

  // Deleting a webhook removes it and its deliveries.
  assert.equal((await call('DELETE', `/api/v1/webhooks/${olgaSlack.json.id}`, olga)).status, 204);
  assert.equal((await call('GET', `/api/v1/webhooks/${olgaSlack.json.id}`, olga)).status, 404);
  assert.equal((await call('DELETE', `/api/v1/webhooks/${olgaSlack.json.id}`, olga)).status, 404);
});

test('an unreachable receiver is retried, then given up after three refused connections; link-local addresses are refused at connect, once', async () => {
  // A port nothing listens on: bind one, note it, close it.
  const closed = await new Promise((resolve) => { const s = http.createServer(); s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }); });
  const down = (await call('POST', '/api/v1/webhooks', olga, { url: `http://127.0.0.1:${closed}/hook`, events: ['drift'] })).json;
  const meta = (await call('POST', '/api/v1/webhooks', olga, { url: 'http://169.254.169.254/latest/meta-data/', events: ['drift'] })).json;
  const p1 = (await call('POST', `/api/v1/webhooks/${down.id}/ping`, olga)).json;
  const p2 = (await call('POST', `/api/v1/webhooks/${meta.id}/ping`, olga)).json;
  const failing = async (hook, pingId) => until(`${hook.url} to be failing twice`, async () => {
    const d = (await call('GET', `/api/v1/webhooks/${hook.id}/deliveries`, olga)).json.items.find((x) => x.id === pingId);
    return (d?.status === 'failing' && d.attempts >= 2) ? d : null;
  });
  const failed = async (hook, pingId) => until(`${hook.url} to be given up`, async () => {
    const d = (await call('GET', `/api/v1/webhooks/${hook.id}/deliveries`, olga)).json.items.find((x) => x.id === pingId);
    return d?.status === 'failed' ? d : null;
  });
  // Nothing listens: retried, and given up after the third refused connection (not 12 times).
  const d1 = await failed(down, p1.id);
  assert.equal(d1.attempts, 3);
  assert.equal(d1.last_status, null);
  assert.match(d1.last_error, /connect/i);
  assert.equal(d1.next_attempt_at, null);
  assert.equal(d1.delivered_at, null);
  // An address the guard refuses is a permanent refusal: one attempt.
  const d2 = await failed(meta, p2.id);
  assert.equal(d2.attempts, 1);
  assert.match(d2.last_error, /^refused to connect: a link-local address/);
  const listed = (await call('GET', `/api/v1/webhooks/${down.id}`, olga)).json;
  assert.equal(listed.deliveries.failed, 1);
  assert.equal(listed.last_delivery.status, 'failed');
  // Redirects are not followed; a long 2xx reply is cut and counts as delivered.
  receiver.failFirst = 0;
  const redirect = (await call('POST', '/api/v1/webhooks', olga, { url: `${receiver.url}/redirect`, events: ['drift'] })).json;
  const big = (await call('POST', '/api/v1/webhooks', olga, { url: `${receiver.url}/big`, events: ['drift'] })).json;
  const p3 = (await call('POST', `/api/v1/webhooks/${redirect.id}/ping`, olga)).json;
  const p4 = (await call('POST', `/api/v1/webhooks/${big.id}/ping`, olga)).json;
  const d3 = await failing(redirect, p3.id);
  assert.equal(d3.last_status, 302);
  assert.equal(d3.last_error, 'HTTP 302 (redirects are not followed)');
  await until('the long reply to count as delivered', async () => (await call('GET', `/api/v1/webhooks/${big.id}/deliveries`, olga)).json.items.find((x) => x.id === p4.id)?.status === 'delivered');
  assert.equal(receiver.requests.filter((q) => q.path === '/olga?channel=capacity' && q.headers['webhook-id'] === p3.id).length, 0);
  for (const w of [redirect, big]) assert.equal((await call('DELETE', `/api/v1/webhooks/${w.id}`, olga)).status, 204);
  // At most 50 test messages wait per owner, all of their webhooks together (here two webhooks
  // to the closed port, whose breaker is open after three refused connections: they wait).
  const down2 = (await call('POST', '/api/v1/webhooks', olga, { url: `http://127.0.0.1:${closed}/other`, events: ['drift'] })).json;
  const waiting = [];
  for (let i = 0; i < 30; i++) waiting.push(await call('POST', `/api/v1/webhooks/${down.id}/ping`, olga));
  for (let i = 0; i < 22; i++) waiting.push(await call('POST', `/api/v1/webhooks/${down2.id}/ping`, olga));
  const statuses = waiting.map((w) => w.status);
  assert.deepEqual(statuses.slice(0, 50), Array(50).fill(202));
  assert.deepEqual(statuses.slice(50), [409, 409]);
  assert.match(waiting.find((w) => w.status === 409).json.detail, /50 test messages/);
  // Delete them so their retries stop.
  assert.equal((await call('DELETE', `/api/v1/webhooks/${down2.id}`, olga)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/webhooks/${down.id}`, olga)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/webhooks/${meta.id}`, olga)).status, 204);
});

test('two server instances share the outbox and post each delivery once', async () => {
  receiver.failFirst = 0;
  const twin = await startTwin(srv);
  try {
    const hook = (await call('POST', '/api/v1/webhooks', olga, { url: `${receiver.url}/burst`, events: ['drift'] })).json;
    const pings = await Promise.all(Array.from({ length: 30 }, (_, i) => api(i % 2 ? twin.url : srv.url, 'POST', `/api/v1/webhooks/${hook.id}/ping`, { token: olga.token })));
    assert.ok(pings.every((p) => p.status === 202));
    const wanted = new Set(pings.map((p) => p.json.id));
    await until('30 deliveries', async () => (await call('GET', `/api/v1/webhooks/${hook.id}`, olga)).json.deliveries.delivered === 30);
    const got = receiver.requests.filter((q) => q.path === '/burst').map((q) => q.headers['webhook-id']);
    assert.equal(got.length, 30, 'no delivery posted twice');
    assert.deepEqual(new Set(got), wanted);
  } finally {
    const s = await twin.stop();
    assert.equal(s.code, 0);
  }
});

test('a log-integrity alert reaches each owner\'s and admin\'s own webhook once, in the alert\'s transaction', async () => {
  receiver.failFirst = 0;
  const t = await startServer({ env: { CAPLEDGER_WEBHOOK_RETRY_BASE_S: '0.2' } });
  try {
    const tAdmin = { name: 'admin', token: mintToken(t, 'admin') };
    const tOlga = await addOwner(t, 'olga');
    const tPavel = await addOwner(t, 'pavel');
    const hook = async (who, p, events) => {
      const r = await api(t.url, 'POST', '/api/v1/webhooks', { token: who.token, body: { url: `${receiver.url}${p}`, events } });
      assert.equal(r.status, 201, r.text);
      return r.json;
    };
    await hook(tAdmin, '/li-admin', ['log_integrity']);
    await hook(tOlga, '/li-olga', ['log_integrity']);
    await hook(tPavel, '/li-pavel-drift-only', ['drift']);
    const review = await createReview(t.url, tOlga, []);
    for (let i = 0; i < 2; i++) assert.equal((await postDecision(t.url, tOlga, record(tOlga, review.id))).status, 201);
    // As the database superuser: drop the last leaf and rewind the head (issue #10's attack).
    const sql = (q) => psql(q, { database: t.db });
    const leaves = sql("SELECT string_agg(encode(leaf, 'base64'), ',' ORDER BY leaf_index) FROM log_leaf")
      .replace(/\n/g, '').split(',').map((b) => Buffer.from(b, 'base64'));
    const first = leafHash(leaves[0]);
    sql(`SET session_replication_role = replica; DELETE FROM decision WHERE leaf_index = 1; DELETE FROM log_leaf WHERE leaf_index = 1; ` +
      `UPDATE log_head SET size = 1, root = '\\x${merkleRoot([first]).toString('hex')}', frontier = '\\x${first.toString('hex')}'`);
    assert.equal((await postDecision(t.url, tOlga, record(tOlga, review.id))).status, 503);

    const got = await until('log-integrity deliveries', () => {
      const at = (p) => receiver.requests.filter((q) => q.path === p && q.status === 200);
      return at('/li-admin').length && at('/li-olga').length ? { admin: at('/li-admin'), olga: at('/li-olga') } : null;
    });
    await sleep(500);
    assert.equal(receiver.requests.filter((q) => q.path === '/li-admin').length, 1, 'the admin hears once, not once per owner');
    assert.equal(receiver.requests.filter((q) => q.path === '/li-olga').length, 1);
    assert.equal(receiver.requests.filter((q) => q.path === '/li-pavel-drift-only').length, 0);
    const adminDoc = JSON.parse(got.admin[0].body);
    const olgaDoc = JSON.parse(got.olga[0].body);
    assert.equal(adminDoc.type, 'alert.log_integrity');
    assert.equal(adminDoc.alert.owner, 'admin');
    assert.equal(olgaDoc.alert.owner, 'olga');
    assert.match(olgaDoc.alert.message, /decision log is inconsistent/);
  } finally {
    await t.stop();
  }
});
