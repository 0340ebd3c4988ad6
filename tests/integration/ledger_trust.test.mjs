// The ways issue #10 broke "auditors need not trust capledger", each done here as the
// PostgreSQL superuser exactly as an attacker with the database would (triggers disabled with
// session_replication_role = replica), and what capledger does about each (the forged bundle —
// a leaf dropped, the root rebuilt, the checkpoint re-signed by another key — rejected by
// `capledger verify --key` is in cli_ledger.test.mjs):
//   1. a rewound log head never gets a second signed root for a size: the append is refused
//      (503 log-inconsistent), /readyz fails, owners and admins get an alert; nor does a deeper
//      rewind that deletes the checkpoints and cosignatures too (the server remembers, outside
//      the database, the largest checkpoint it signed: KEY.state);
//   2. once the log is inconsistent, key events stop with the decisions (503);
//   3. a revocation cleared in the signing_key table (and its log_key_event index row) does not
//      let the key sign again: the key check reads the leaves;
//   4. a decision row edited in place is never served: the API answers from the leaf.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import {
  addOwner, addUser, createReview, jcs, leafHash, merkleRoot, newKeyPair, postDecision, record,
  signRecord, signWithServerKey, startTwin, verifyBundle,
} from './ledger.lib.mjs';

// A server with an owner (olga), an auditor and `n` revise decisions in one review.
async function setUp(n = 3) {
  const srv = await startServer();
  const admin = { name: 'admin', token: mintToken(srv, 'admin') };
  const olga = await addOwner(srv, 'olga');
  const auditor = addUser(srv, 'audrey', 'auditor');
  const review = await createReview(srv.url, olga, []);
  const decisions = [];
  for (let i = 0; i < n; i++) {
    const rec = record(olga, review.id, { decision: 'revise' });
    const r = await postDecision(srv.url, olga, rec);
    assert.equal(r.status, 201, r.text);
    decisions.push({ rec, reply: r.json });
  }
  const sql = (q) => psql(q, { database: srv.db });
  const asSuperuser = (q) => sql(`SET session_replication_role = replica; ${q}`);
  const get = (p, who = auditor) => api(srv.url, 'GET', p, { token: who.token });
  const key = (await get('/api/v1/log/key')).text;
  return { srv, admin, olga, auditor, review, decisions, sql, asSuperuser, get, key };
}

// The compact range of a tree (what log_head.frontier holds): the roots of its perfect
// subtrees, largest first.
function frontier(hashes) {
  const out = [];
  let start = 0;
  for (let bit = 2 ** 40; bit >= 1; bit /= 2) {
    if (Math.floor(hashes.length / bit) % 2 === 1) {
      out.push(merkleRoot(hashes.slice(start, start + bit)));
      start += bit;
    }
  }
  return Buffer.concat(out);
}

test('a rewound log head gets no second signed root: 503 log-inconsistent, not ready, alerts', async () => {
  const t = await setUp(3);
  try {
    // An owner's webhook subscribed to log integrity alerts (delivered by the alert outbox).
    const hook = await api(t.srv.url, 'POST', '/api/v1/webhooks', { token: t.olga.token, body: { url: 'https://example.com/capledger-hook', events: ['log_integrity'] } });
    assert.equal(hook.status, 201, hook.text);
    const size = Number(t.sql('SELECT size FROM log_head'));
    const leaves = t.sql("SELECT string_agg(encode(leaf, 'base64'), ',' ORDER BY leaf_index) FROM log_leaf")
      .replace(/\n/g, '').split(',').map((b) => Buffer.from(b, 'base64'));
    assert.equal(leaves.length, size);
    const hashes = leaves.map(leafHash);
    const lastId = t.sql(`SELECT id FROM decision WHERE leaf_index = ${size - 1}`);
    const rootBefore = t.sql(`SELECT encode(root, 'hex') FROM log_checkpoint WHERE tree_size = ${size}`);
    // The attack of issue #10: drop the last leaf and its decision, rewind the head to the
    // previous size, root and frontier.
    const prevRoot = merkleRoot(hashes.slice(0, size - 1)).toString('hex');
    const prevFrontier = frontier(hashes.slice(0, size - 1)).toString('hex');
    t.asSuperuser(`DELETE FROM decision WHERE id = '${lastId}'; DELETE FROM log_leaf WHERE leaf_index = ${size - 1}; ` +
      `UPDATE log_head SET size = ${size - 1}, root = '\\x${prevRoot}', frontier = '\\x${prevFrontier}'`);

    const r = await postDecision(t.srv.url, t.olga, record(t.olga, t.review.id));
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.type, 'https://capledger.dev/problems/log-inconsistent');
    // Still exactly one checkpoint of that size, with the root it always had.
    assert.equal(t.sql(`SELECT count(*) || ' ' || string_agg(encode(root, 'hex'), ',') FROM log_checkpoint WHERE tree_size = ${size}`), `1 ${rootBefore}`);
    assert.equal(t.sql('SELECT max(tree_size) FROM log_checkpoint'), String(size));
    // This process appends nothing more, even if the head is put back: an operator restarts it.
    const again = await postDecision(t.srv.url, t.olga, record(t.olga, t.review.id));
    assert.equal(again.status, 503, again.text);
    const ready = await api(t.srv.url, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.json.detail, new RegExp(`decision log is inconsistent: the log head has size ${size - 1}, but a checkpoint of size ${size} is stored`));
    // Owners and admins are alerted; the server log holds the evidence.
    const alerts = await t.get('/api/v1/alerts', t.admin);
    assert.equal(alerts.status, 200, alerts.text);
    const integrity = alerts.json.items.filter((a) => a.kind === 'log_integrity');
    assert.deepEqual(integrity.map((a) => a.owner).sort(), ['admin', 'olga']);
    assert.match(integrity[0].message, new RegExp(`checkpoint of size ${size} is stored`));
    assert.equal(t.sql("SELECT count(*) FROM webhook_delivery WHERE event = 'log_integrity'"), '1');
    const mine = await t.get('/api/v1/alerts', t.olga);
    assert.equal(mine.json.items.filter((a) => a.kind === 'log_integrity').length, 1);
    assert.ok(t.srv.stderrLines().some((l) => l.includes('"the decision log is inconsistent: appends stopped"') && l.includes(`checkpoint of size ${size} is stored`)));
  } finally {
    await t.srv.stop();
  }
});

// The leaves as stored, and what the head was before a rewind (to put it back).
function storedLog(t) {
  const size = Number(t.sql('SELECT size FROM log_head'));
  const leaves = t.sql("SELECT string_agg(encode(leaf, 'base64'), ',' ORDER BY leaf_index) FROM log_leaf")
    .replace(/\n/g, '').split(',').map((b) => Buffer.from(b, 'base64'));
  assert.equal(leaves.length, size);
  return { size, leaves, hashes: leaves.map(leafHash) };
}

// A deeper rewind: the last leaf, its decision, the checkpoint of that size and its
// cosignatures deleted, the head put back to the previous size. The database agrees with
// itself; only what the server remembers outside it (KEY.state) shows the rewind.
function deepRewind(t) {
  const { size, hashes } = storedLog(t);
  const lastId = t.sql(`SELECT id FROM decision WHERE leaf_index = ${size - 1}`);
  const prevRoot = merkleRoot(hashes.slice(0, size - 1)).toString('hex');
  const prevFrontier = frontier(hashes.slice(0, size - 1)).toString('hex');
  t.asSuperuser(`DELETE FROM decision WHERE id = '${lastId}'; DELETE FROM log_leaf WHERE leaf_index = ${size - 1}; ` +
    `DELETE FROM log_cosignature WHERE tree_size = ${size}; DELETE FROM log_checkpoint WHERE tree_size = ${size}; ` +
    `UPDATE log_head SET size = ${size - 1}, root = '\\x${prevRoot}', frontier = '\\x${prevFrontier}'`);
  return { size, rootBefore: merkleRoot(hashes).toString('hex') };
}

test('a deeper rewind (checkpoint and cosignatures deleted too) gets no second signed root: the state file outside the database', async () => {
  const t = await setUp(3);
  let twin;
  try {
    const { size, rootBefore } = deepRewind(t);
    const state = `${t.srv.keyFile}.state`;
    const r = await postDecision(t.srv.url, t.olga, record(t.olga, t.review.id));
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.type, 'https://capledger.dev/problems/log-inconsistent');
    // No checkpoint of that size was signed again (with another root).
    assert.equal(t.sql('SELECT max(tree_size) FROM log_checkpoint'), String(size - 1));
    const evidence = new RegExp(`the log head has size ${size - 1}, but this server signed or observed the checkpoint of size ${size} \\(root ${rootBefore}\\): the database was rewound \\(state file ${state.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`);
    const ready = await api(t.srv.url, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.json.detail, evidence);
    const integrity = (await t.get('/api/v1/alerts', t.admin)).json.items.filter((a) => a.kind === 'log_integrity');
    assert.deepEqual(integrity.map((a) => a.owner).sort(), ['admin', 'olga']);
    assert.match(integrity[0].message, evidence);
    assert.ok(t.srv.stderrLines().some((l) => l.includes('"the decision log is inconsistent: appends stopped"') && evidence.test(l)));
    // A restart with the same key (and so the same state file) finds it at start.
    twin = await startTwin(t.srv);
    const again = await api(twin.url, 'GET', '/readyz');
    assert.equal(again.status, 503);
    assert.match(again.json.detail, evidence);
    assert.equal((await postDecision(twin.url, t.olga, record(t.olga, t.review.id))).status, 503);
    assert.equal(t.sql('SELECT max(tree_size) FROM log_checkpoint'), String(size - 1));
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});

test('the state file holds the latest checkpoint signed, and a rewritten leaf below it is found at start', async () => {
  const t = await setUp(2);
  let twin;
  try {
    const state = fs.readFileSync(`${t.srv.keyFile}.state`, 'utf8');
    const head = (await t.get('/api/v1/log/checkpoint')).text;
    assert.equal(state, head.slice(0, head.indexOf('\n\n') + 1));
    // Rewound by one leaf and then extended by a forged leaf of the same size: the database is
    // consistent again (head, checkpoint row and leaves), but not with the root it signed.
    const { size, hashes } = storedLog(t);
    const forged = Buffer.from('{"forged":true}');
    const forgedHashes = [...hashes.slice(0, size - 1), leafHash(forged)];
    const forgedRoot = merkleRoot(forgedHashes).toString('hex');
    const lastId = t.sql(`SELECT id FROM decision WHERE leaf_index = ${size - 1}`);
    t.asSuperuser(`DELETE FROM decision WHERE id = '${lastId}'; UPDATE log_leaf SET leaf = '\\x${forged.toString('hex')}', leaf_hash = '\\x${leafHash(forged).toString('hex')}' WHERE leaf_index = ${size - 1}; ` +
      `UPDATE log_checkpoint SET root = '\\x${forgedRoot}' WHERE tree_size = ${size}; ` +
      `UPDATE log_head SET root = '\\x${forgedRoot}', frontier = '\\x${frontier(forgedHashes).toString('hex')}'`);
    twin = await startTwin(t.srv);
    const ready = await api(twin.url, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.json.detail, new RegExp(`the log head has size ${size} and root ${forgedRoot}, but this server signed or observed root [0-9a-f]{64} for that size`));
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});

test('at start the root over the stored leaves is compared with the latest checkpoint', async () => {
  const t = await setUp(3);
  let twin;
  try {
    // A leaf rewritten with a matching leaf_hash: proofs would still be self-consistent, and
    // the head is untouched, so only recomputing the root from the leaves shows it.
    const size = Number(t.sql('SELECT size FROM log_head'));
    const index = Number(t.sql("SELECT min(leaf_index) FROM decision"));
    const leaf = Buffer.from(t.sql(`SELECT encode(leaf, 'base64') FROM log_leaf WHERE leaf_index = ${index}`), 'base64');
    const changed = Buffer.from(leaf.toString().replace(/"received_at":"(\d)/, (m, d) => `"received_at":"${(Number(d) + 1) % 10}`));
    assert.notDeepEqual(changed, leaf);
    t.asSuperuser(`UPDATE log_leaf SET leaf = '\\x${changed.toString('hex')}', leaf_hash = '\\x${leafHash(changed).toString('hex')}' WHERE leaf_index = ${index}`);
    const { startTwin } = await import('./ledger.lib.mjs');
    twin = await startTwin(t.srv);
    const ready = await api(twin.url, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.json.detail, new RegExp(`the root over the ${size} stored leaves is [0-9a-f]{64}, but the checkpoint of that size has root [0-9a-f]{64}`));
    const r = await postDecision(twin.url, t.olga, record(t.olga, t.review.id));
    assert.equal(r.status, 503, r.text);
    assert.equal(t.sql('SELECT max(tree_size) FROM log_checkpoint'), String(size));
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});

test('once the log is inconsistent, enrolling or revoking a key answers 503 log-inconsistent too', async () => {
  const t = await setUp(2);
  let twin;
  try {
    const rita = await addOwner(t.srv, 'rita');
    // A leaf rewritten (with a matching leaf_hash): only the start check sees it, so the twin
    // is faulted while each append's own head check would still pass.
    const index = Number(t.sql('SELECT min(leaf_index) FROM decision'));
    const leaf = Buffer.from(t.sql(`SELECT encode(leaf, 'base64') FROM log_leaf WHERE leaf_index = ${index}`), 'base64');
    const changed = Buffer.from(leaf.toString().replace(/"received_at":"(\d)/, (m, d) => `"received_at":"${(Number(d) + 1) % 10}`));
    t.asSuperuser(`UPDATE log_leaf SET leaf = '\\x${changed.toString('hex')}', leaf_hash = '\\x${leafHash(changed).toString('hex')}' WHERE leaf_index = ${index}`);
    twin = await startTwin(t.srv);
    assert.equal((await api(twin.url, 'GET', '/readyz')).status, 503);
    const size = t.sql('SELECT size FROM log_head');
    const keys = t.sql('SELECT count(*) FROM signing_key');
    const fresh = newKeyPair();
    const add = await api(twin.url, 'PUT', '/api/v1/me/signing-key', { token: rita.token, body: { public_key: fresh.publicKeyB64, password: rita.password } });
    assert.equal(add.status, 503, add.text);
    assert.equal(add.json.type, 'https://capledger.dev/problems/log-inconsistent');
    const del = await api(twin.url, 'DELETE', `/api/v1/me/signing-keys/${rita.keyId}`, { token: rita.token });
    assert.equal(del.status, 503, del.text);
    assert.equal(del.json.type, 'https://capledger.dev/problems/log-inconsistent');
    // Nothing half-written: no leaf, no key row, no revocation.
    assert.equal(t.sql('SELECT size FROM log_head'), size);
    assert.equal(t.sql('SELECT count(*) FROM signing_key'), keys);
    assert.equal(t.sql(`SELECT revoked_at IS NULL FROM signing_key WHERE key_id = '${rita.keyId}'`), 't');
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});

test('a revocation cleared in the database does not let the key sign again: the log records it', async () => {
  const t = await setUp(1);
  try {
    const rita = await addOwner(t.srv, 'rita');
    assert.equal((await postDecision(t.srv.url, rita, record(rita, t.review.id))).status, 201);
    const del = await api(t.srv.url, 'DELETE', `/api/v1/me/signing-keys/${rita.keyId}`, { token: rita.token });
    assert.ok(del.status === 200 || del.status === 204, del.text);
    // The attack of issue #10: the revocation cleared by the superuser.
    t.asSuperuser(`UPDATE signing_key SET revoked_at = NULL WHERE key_id = '${rita.keyId}'`);
    const r = await postDecision(t.srv.url, rita, record(rita, t.review.id));
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.errors.map((e) => `${e.pointer} ${e.message}`).join('\n'),
      /^\/record\/signer_key_id this key was revoked \(the log records it: key [0-9a-f]{64} was revoked by leaf \d+\)/m);
    // Her enrolment and revocation are leaves of the log, in their documented form.
    const bundle = (await t.get('/api/v1/audit/bundle')).json;
    const leaves = bundle.leaves.map((b) => Buffer.from(b, 'base64'));
    const docs = leaves.map((l) => JSON.parse(l));
    const events = docs.filter((d) => d.kind && d.key_id === rita.keyId);
    assert.deepEqual(events.map((e) => e.kind), ['key_enrol', 'key_revoke']);
    assert.deepEqual(Object.keys(events[0]), ['at', 'key_id', 'kind', 'owner', 'public_key']);
    assert.equal(events[0].owner, 'rita');
    assert.equal(events[0].public_key, rita.publicKeyB64);
    assert.deepEqual(Object.keys(events[1]), ['at', 'key_id', 'kind']);
    assert.equal(verifyBundle(bundle, t.key).status, 0);
    // Had the server appended her decision anyway (and signed for it), verify --key says so.
    const rec = record(rita, t.review.id, { supersedes: null });
    const forgedLeaf = Buffer.from(jcs({ record: rec, signature: signRecord(rita, rec), public_key: rita.publicKeyB64, received_at: new Date().toISOString() }));
    const forged = { ...bundle, leaves: [...bundle.leaves, forgedLeaf.toString('base64')] };
    forged.checkpoint = signWithServerKey(t.srv.keyFile, bundle.origin, leaves.length + 1, merkleRoot([...leaves, forgedLeaf].map(leafHash)));
    const v = verifyBundle(forged, t.key);
    assert.equal(v.status, 1, v.output);
    assert.match(v.output, new RegExp(`FAILED: leaf ${leaves.length}: key ${rita.keyId} was revoked by leaf \\d+`));
  } finally {
    await t.srv.stop();
  }
});

test('a revocation whose index row is deleted too does not let the key sign again: a log fault', async () => {
  const t = await setUp(1);
  try {
    const rita = await addOwner(t.srv, 'rita');
    assert.equal((await postDecision(t.srv.url, rita, record(rita, t.review.id))).status, 201);
    const del = await api(t.srv.url, 'DELETE', `/api/v1/me/signing-keys/${rita.keyId}`, { token: rita.token });
    assert.equal(del.status, 200, del.text);
    const size = t.sql('SELECT size FROM log_head');
    // The attack: the revocation cleared in signing_key and its row deleted from the index.
    t.asSuperuser(`UPDATE signing_key SET revoked_at = NULL WHERE key_id = '${rita.keyId}'; DELETE FROM log_key_event WHERE key_id = '${rita.keyId}' AND kind = 'revoke'`);
    const r = await postDecision(t.srv.url, rita, record(rita, t.review.id));
    // The index no longer names the leaves the log holds for the key: the log is inconsistent.
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.type, 'https://capledger.dev/problems/log-inconsistent');
    assert.equal(t.sql('SELECT size FROM log_head'), size);
    assert.equal((await api(t.srv.url, 'GET', '/readyz')).status, 503);
  } finally {
    await t.srv.stop();
  }
});

test('a revoke leaf rewritten to another key id (and revoked_at cleared) signs nothing: a log fault', async () => {
  const t = await setUp(1);
  try {
    const rita = await addOwner(t.srv, 'rita');
    assert.equal((await api(t.srv.url, 'DELETE', `/api/v1/me/signing-keys/${rita.keyId}`, { token: rita.token })).status, 200);
    const index = Number(t.sql(`SELECT leaf_index FROM log_key_event WHERE key_id = '${rita.keyId}' AND kind = 'revoke'`));
    const leaf = Buffer.from(t.sql(`SELECT encode(leaf, 'base64') FROM log_leaf WHERE leaf_index = ${index}`), 'base64');
    const changed = Buffer.from(leaf.toString().replace(rita.keyId, 'f'.repeat(64)));
    assert.notDeepEqual(changed, leaf);
    const size = t.sql('SELECT size FROM log_head');
    t.asSuperuser(`UPDATE log_leaf SET leaf = '\\x${changed.toString('hex')}', leaf_hash = '\\x${leafHash(changed).toString('hex')}' WHERE leaf_index = ${index}; ` +
      `UPDATE signing_key SET revoked_at = NULL WHERE key_id = '${rita.keyId}'`);
    const r = await postDecision(t.srv.url, rita, record(rita, t.review.id));
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.type, 'https://capledger.dev/problems/log-inconsistent');
    assert.equal(t.sql('SELECT size FROM log_head'), size);
    assert.equal((await api(t.srv.url, 'GET', '/readyz')).status, 503);
    const alerts = (await t.get('/api/v1/alerts', t.admin)).json.items.filter((a) => a.kind === 'log_integrity');
    assert.ok(alerts.some((a) => a.message.includes(rita.keyId)), JSON.stringify(alerts));
  } finally {
    await t.srv.stop();
  }
});

test('a key the log never enrolled signs nothing, even when its row is in the database', async () => {
  const t = await setUp(1);
  try {
    const sam = { ...addUser(t.srv, 'sam', 'owner'), ...newKeyPair() };
    const userId = t.sql("SELECT id FROM app_user WHERE username = 'sam'");
    t.asSuperuser(`INSERT INTO signing_key (key_id, user_id, public_key) VALUES ('${sam.keyId}', '${userId}', decode('${sam.publicKeyB64}', 'base64'))`);
    const r = await postDecision(t.srv.url, sam, record(sam, t.review.id));
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.errors.map((e) => `${e.pointer} ${e.message}`).join('\n'),
      /^\/record\/signer_key_id the log does not let this key sign: key [0-9a-f]{64} is not enrolled by an earlier leaf/m);
  } finally {
    await t.srv.stop();
  }
});

test('a log begun before key events were logged: its keys are enrolled at start, after its leaves', async () => {
  // What an upgraded database holds: a key registered and a decision appended before key
  // events existed (no enrolment leaf), made here as the superuser with the server's own key.
  const srv = await startServer();
  let twin;
  try {
    const sql = (q) => psql(q, { database: srv.db });
    const lena = { ...addUser(srv, 'lena', 'owner'), ...newKeyPair() };
    const review = await createReview(srv.url, lena, []);
    const userId = sql("SELECT id FROM app_user WHERE username = 'lena'");
    const rec = record(lena, review.id, { supersedes: null });
    const receivedAt = '2024-05-01T09:00:00.000001Z';
    const leaf = Buffer.from(jcs({ record: rec, signature: signRecord(lena, rec), public_key: lena.publicKeyB64, received_at: receivedAt }));
    const hash = leafHash(leaf).toString('hex');
    const origin = sql('SELECT origin FROM log_head');
    const note = signWithServerKey(srv.keyFile, origin, 1, leafHash(leaf));
    sql('SET session_replication_role = replica; ' +
      `INSERT INTO signing_key (key_id, user_id, public_key, created_at) VALUES ('${lena.keyId}', '${userId}', decode('${lena.publicKeyB64}', 'base64'), '2024-04-01T00:00:00Z'); ` +
      // What migration 0101 captured on an upgraded database: the keys still to be enrolled.
      `INSERT INTO log_key_backfill_key (key_id) VALUES ('${lena.keyId}'); ` +
      `INSERT INTO log_leaf (leaf_index, leaf, leaf_hash) VALUES (0, '\\x${leaf.toString('hex')}', '\\x${hash}'); ` +
      `INSERT INTO log_checkpoint (tree_size, root, note) VALUES (1, '\\x${hash}', convert_from('\\x${Buffer.from(note).toString('hex')}', 'UTF8')); ` +
      `UPDATE log_head SET size = 1, root = '\\x${hash}', frontier = '\\x${hash}'; ` +
      'INSERT INTO decision (id, review_id, decision, chosen_option, comparison_sha256, record, signature, signer_key_id, signer, supersedes, leaf_index, received_at) ' +
      `VALUES ('${rec.id}', '${review.id}', 'revise', NULL, '{}', '${JSON.stringify(rec)}'::jsonb, '${signRecord(lena, rec)}', '${lena.keyId}', 'lena', NULL, 0, '${receivedAt}')`);
    // The next start enrols lena's key after the existing leaf; she signs again.
    const { startTwin } = await import('./ledger.lib.mjs');
    twin = await startTwin(srv);
    assert.equal((await api(twin.url, 'GET', '/readyz')).status, 200);
    const enrol = JSON.parse(Buffer.from(sql("SELECT encode(leaf, 'base64') FROM log_leaf WHERE leaf_index = 1"), 'base64'));
    assert.equal(enrol.kind, 'key_enrol');
    assert.equal(enrol.key_id, lena.keyId);
    assert.equal(enrol.at, '2024-04-01T00:00:00.000000Z');
    const r = await postDecision(twin.url, lena, record(lena, review.id, { supersedes: rec.id }));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.leaf_index, 2);
    // A restart does not enrol it twice.
    await twin.stop();
    twin = await startTwin(srv);
    assert.equal(sql('SELECT size FROM log_head'), '3');
    // verify accepts the legacy decision, says so, and holds the new one to the log's keys.
    const auditor = addUser(srv, 'audrey', 'auditor');
    const bundle = (await api(twin.url, 'GET', '/api/v1/audit/bundle', { token: auditor.token })).text;
    const key = (await api(twin.url, 'GET', '/api/v1/log/key', { token: auditor.token })).text;
    const v = verifyBundle(bundle, key);
    assert.equal(v.status, 0, v.output);
    assert.match(v.output, /note: 1 decision leaves come before the log's first key event/);
    assert.match(v.output, new RegExp(`approver lena, key ${lena.keyId} \\(enrolled by leaf 1\\): signed leaves 0, 2`));
  } finally {
    await twin?.stop();
    await srv.stop();
  }
});

test('a decision row edited in place is never served: the API answers from the leaf or not at all', async () => {
  // One line of decisions (a review has one current decision): first ← second ← third.
  const t = await setUp(3);
  try {
    const [first, second, third] = t.decisions;
    const before = await t.get(`/api/v1/decisions/${first.rec.id}`);
    assert.equal(before.status, 200, before.text);
    assert.equal(before.json.decision, 'revise');
    assert.deepEqual(before.json.record, first.rec);
    // The attack of issue #10: revise → advance, in the row and in its copy of the record.
    t.asSuperuser(`UPDATE decision SET decision = 'advance', record = jsonb_set(record, '{decision}', '"advance"') WHERE id = '${first.rec.id}'`);
    const r = await t.get(`/api/v1/decisions/${first.rec.id}`);
    assert.equal(r.status, 500, r.text);
    assert.equal(r.json.type, 'https://capledger.dev/problems/log-integrity');
    assert.match(r.json.detail, new RegExp(`decision ${first.rec.id}: the stored row's decision differs from leaf ${first.reply.leaf_index}`));
    assert.doesNotMatch(r.text, /advance"/);
    const list = await t.get(`/api/v1/decisions?review=${t.review.id}`);
    assert.equal(list.status, 500, list.text);
    // The untouched decision still reads back; owners and admins are alerted.
    assert.equal((await t.get(`/api/v1/decisions/${second.rec.id}`)).status, 200);
    const alerts = (await t.get('/api/v1/alerts', t.admin)).json.items.filter((a) => a.kind === 'log_integrity');
    assert.ok(alerts.some((a) => a.message.includes(first.rec.id)), JSON.stringify(alerts));
    // A signer renamed in the row, and a successor claimed by a row: named too.
    t.asSuperuser(`UPDATE decision SET decision = 'revise', record = jsonb_set(record, '{decision}', '"revise"'), signer = 'mallory' WHERE id = '${first.rec.id}'`);
    const renamed = await t.get(`/api/v1/decisions/${first.rec.id}`);
    assert.equal(renamed.status, 500, renamed.text);
    assert.match(renamed.json.detail, /signer is not the owner the log enrolled its key for/);
    // third's row claims first, whose real successor (second) is unlinked: its leaf supersedes second.
    t.asSuperuser(`UPDATE decision SET signer = 'olga' WHERE id = '${first.rec.id}'; UPDATE decision SET supersedes = NULL WHERE id = '${second.rec.id}'; UPDATE decision SET supersedes = '${first.rec.id}' WHERE id = '${third.rec.id}'`);
    const claimed = await t.get(`/api/v1/decisions/${first.rec.id}`);
    assert.equal(claimed.status, 500, claimed.text);
    t.asSuperuser(`UPDATE decision SET supersedes = '${second.rec.id}' WHERE id = '${third.rec.id}'; UPDATE decision SET supersedes = '${first.rec.id}' WHERE id = '${second.rec.id}'`);
    assert.equal((await t.get(`/api/v1/decisions/${first.rec.id}`)).status, 200);
    // The log itself was never touched: the bundle verifies.
    assert.equal(verifyBundle((await t.get('/api/v1/audit/bundle')).json, t.key).status, 0);
  } finally {
    await t.srv.stop();
  }
});

// ---- authenticated reads (the adversarial pass after issue #10) ----------------------------

test('a start runs in one transaction: no "transaction in progress" warnings', async () => {
  const t = await setUp(1);
  try {
    const log = t.srv.stderrLines().join('\n');
    assert.doesNotMatch(log, /transaction in progress/);
  } finally {
    await t.srv.stop();
  }
});

test('a leaf and its decision row edited together are never served: 503 log-inconsistent', async () => {
  const t = await setUp(3);
  let twin;
  try {
    const [first, second] = t.decisions;
    const index = first.reply.leaf_index;
    // revise → advance in the leaf (with a matching leaf_hash), in the row and in its record.
    const leaf = Buffer.from(t.sql(`SELECT encode(leaf, 'base64') FROM log_leaf WHERE leaf_index = ${index}`), 'base64');
    const changed = Buffer.from(leaf.toString().replace('"decision":"revise"', '"decision":"advance"'));
    assert.notDeepEqual(changed, leaf);
    t.asSuperuser(`UPDATE log_leaf SET leaf = '\\x${changed.toString('hex')}', leaf_hash = '\\x${leafHash(changed).toString('hex')}' WHERE leaf_index = ${index}; ` +
      `UPDATE decision SET decision = 'advance', record = jsonb_set(record, '{decision}', '"advance"') WHERE id = '${first.rec.id}'`);
    const r = await t.get(`/api/v1/decisions/${first.rec.id}`);
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.type, 'https://capledger.dev/problems/log-inconsistent');
    assert.doesNotMatch(r.text, /advance/);
    // The fault is the log's: appends stop, /readyz fails, every decision read answers 503.
    assert.equal((await api(t.srv.url, 'GET', '/readyz')).status, 503);
    assert.equal((await t.get(`/api/v1/decisions/${second.rec.id}`)).status, 503);
    const list = await t.get(`/api/v1/decisions?review=${t.review.id}`);
    assert.equal(list.status, 503, list.text);
    assert.equal(list.json.type, 'https://capledger.dev/problems/log-inconsistent');
    const alerts = (await t.get('/api/v1/alerts', t.admin)).json.items.filter((a) => a.kind === 'log_integrity');
    assert.ok(alerts.some((a) => a.message.includes(`leaf ${index}`)), JSON.stringify(alerts));
    // A restart detects it (the root over the leaves) and still serves none of it.
    twin = await startTwin(t.srv);
    assert.equal((await api(twin.url, 'GET', '/readyz')).status, 503);
    const again = await api(twin.url, 'GET', `/api/v1/decisions/${first.rec.id}`, { token: t.auditor.token });
    assert.equal(again.status, 503, again.text);
    assert.doesNotMatch(again.text, /advance/);
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});

test('tampered tiles are rebuilt from the leaves at start when the leaves give the checkpoint root', async () => {
  const t = await setUp(3);
  let twin;
  try {
    const bogus = crypto.randomBytes(32).toString('hex');
    // A stored hash replaced (the "only grows" trigger is off as the superuser).
    t.asSuperuser(`UPDATE log_tile SET hashes = '\\x${bogus}' || substr(hashes, 33) WHERE level = 0 AND tile_index = 0`);
    twin = await startTwin(t.srv);
    assert.equal((await api(twin.url, 'GET', '/readyz')).status, 200);
    assert.match(twin.log(), /rebuilding them from the leaves/);
    assert.notEqual(t.sql("SELECT encode(substr(hashes, 1, 32), 'hex') FROM log_tile WHERE level = 0 AND tile_index = 0"), bogus);
    const r = await api(twin.url, 'GET', `/api/v1/decisions/${t.decisions[0].rec.id}`, { token: t.auditor.token });
    assert.equal(r.status, 200, r.text);
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});

test('a deleted decision row hides nothing: the review line is read from the log, and a fork is refused', async () => {
  const t = await setUp(5);
  try {
    const size = t.sql('SELECT size FROM log_head');
    const last = t.decisions[4];
    const prev = t.decisions[3];
    // The attack: the current decision's row deleted; leaf 3's decision looks current.
    t.asSuperuser(`DELETE FROM decision WHERE leaf_index = ${last.reply.leaf_index}`);
    const fork = await postDecision(t.srv.url, t.olga, record(t.olga, t.review.id, { supersedes: prev.rec.id }));
    assert.equal(fork.status, 503, fork.text);
    assert.equal(fork.json.type, 'https://capledger.dev/problems/log-inconsistent');
    assert.equal(t.sql('SELECT size FROM log_head'), size);
    assert.equal((await api(t.srv.url, 'GET', '/readyz')).status, 503);
    const list = await t.get(`/api/v1/decisions?review=${t.review.id}`);
    assert.equal(list.status, 503, list.text);
    const alerts = (await t.get('/api/v1/alerts', t.admin)).json.items.filter((a) => a.kind === 'log_integrity');
    assert.ok(alerts.some((a) => a.message.includes(`${last.rec.id} (leaf ${last.reply.leaf_index}) has no decision row`)), JSON.stringify(alerts));
  } finally {
    await t.srv.stop();
  }
});

test('a backdated key row inserted by hand is not enrolled by a restart: it signs nothing, and the start says so', async () => {
  const t = await setUp(1);
  let twin;
  try {
    const sam = { ...addUser(t.srv, 'sam', 'owner'), ...newKeyPair() };
    const userId = t.sql("SELECT id FROM app_user WHERE username = 'sam'");
    const size = t.sql('SELECT size FROM log_head');
    t.asSuperuser(`INSERT INTO signing_key (key_id, user_id, public_key, created_at) VALUES ('${sam.keyId}', '${userId}', decode('${sam.publicKeyB64}', 'base64'), '2000-01-01T00:00:00Z')`);
    twin = await startTwin(t.srv);
    assert.equal(t.sql('SELECT size FROM log_head'), size, 'no key_enrol leaf appended');
    const ready = await api(twin.url, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.json.detail, new RegExp(`signing key rows \\["${sam.keyId}"\\] have no enrolment leaf`));
    const r = await postDecision(twin.url, sam, record(sam, t.review.id));
    assert.equal(r.status, 503, r.text);
    assert.equal(t.sql('SELECT size FROM log_head'), size);
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});

test('verify refuses a bundle whose decisions fork a review line or supersede an unknown decision', async () => {
  const t = await setUp(2);
  try {
    const bundle = (await t.get('/api/v1/audit/bundle')).json;
    const leaves = bundle.leaves.map((b) => Buffer.from(b, 'base64'));
    const forgedBundle = (rec) => {
      const leaf = Buffer.from(jcs({ record: rec, signature: signRecord(t.olga, rec), public_key: t.olga.publicKeyB64, received_at: new Date().toISOString() }));
      const all = [...leaves, leaf];
      return { ...bundle, leaves: all.map((l) => l.toString('base64')), checkpoint: signWithServerKey(t.srv.keyFile, bundle.origin, all.length, merkleRoot(all.map(leafHash))) };
    };
    // A second decision superseding the first (already superseded by the second leaf).
    let v = verifyBundle(forgedBundle(record(t.olga, t.review.id, { supersedes: t.decisions[0].rec.id })), t.key);
    assert.equal(v.status, 1, v.output);
    assert.match(v.output, new RegExp(`FAILED: leaf ${leaves.length}: supersedes ${t.decisions[0].rec.id}, which leaf \\d+ already superseded`));
    v = verifyBundle(forgedBundle(record(t.olga, t.review.id, { supersedes: crypto.randomUUID() })), t.key);
    assert.equal(v.status, 1, v.output);
    assert.match(v.output, /which no earlier leaf holds/);
    assert.equal(verifyBundle(bundle, t.key).status, 0);
  } finally {
    await t.srv.stop();
  }
});
