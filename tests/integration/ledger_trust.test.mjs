// The four ways issue #10 broke "auditors need not trust capledger", each done here as the
// PostgreSQL superuser exactly as an attacker with the database would (triggers disabled with
// session_replication_role = replica), and what capledger does about each:
//   1. a forged bundle (a leaf dropped, the root rebuilt, the checkpoint re-signed by another
//      key) is rejected by `capledger verify --key`;
//   2. a rewound log head never gets a second signed root for a size: the append is refused
//      (503 log-inconsistent), /readyz fails, owners and admins get an alert;
//   3. a revocation cleared in the signing_key table does not let the key sign again;
//   4. a decision row edited in place is never served: the API answers from the leaf.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import {
  addOwner, addUser, createReview, leafHash, merkleRoot, postDecision, record, verifyBundle,
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
    assert.match(ready.json.detail, /decision log is inconsistent: the log head has size 2, but a checkpoint of size 3 is stored/);
    // Owners and admins are alerted; the server log holds the evidence.
    const alerts = await t.get('/api/v1/alerts', t.admin);
    assert.equal(alerts.status, 200, alerts.text);
    const integrity = alerts.json.items.filter((a) => a.kind === 'log_integrity');
    assert.deepEqual(integrity.map((a) => a.owner).sort(), ['admin', 'olga']);
    assert.match(integrity[0].message, /checkpoint of size 3 is stored/);
    const mine = await t.get('/api/v1/alerts', t.olga);
    assert.equal(mine.json.items.filter((a) => a.kind === 'log_integrity').length, 1);
    assert.ok(t.srv.stderrLines().some((l) => /"the decision log is inconsistent: appends stopped".*checkpoint of size 3/.test(l)));
  } finally {
    await t.srv.stop();
  }
});

test('at start the root over the stored leaves is compared with the latest checkpoint', async () => {
  const t = await setUp(3);
  let twin;
  try {
    // A leaf rewritten with a matching leaf_hash: proofs would still be self-consistent, and
    // the head is untouched, so only recomputing the root from the leaves shows it.
    const leaf = Buffer.from(t.sql("SELECT encode(leaf, 'base64') FROM log_leaf WHERE leaf_index = 1"), 'base64');
    const changed = Buffer.from(leaf.toString().replace(/"received_at":"(\d)/, (m, d) => `"received_at":"${(Number(d) + 1) % 10}`));
    assert.notDeepEqual(changed, leaf);
    t.asSuperuser(`UPDATE log_leaf SET leaf = '\\x${changed.toString('hex')}', leaf_hash = '\\x${leafHash(changed).toString('hex')}' WHERE leaf_index = 1`);
    const { startTwin } = await import('./ledger.lib.mjs');
    twin = await startTwin(t.srv);
    const ready = await api(twin.url, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.json.detail, /the root over the 3 stored leaves is [0-9a-f]{64}, but the checkpoint of that size has root [0-9a-f]{64}/);
    const r = await postDecision(twin.url, t.olga, record(t.olga, t.review.id));
    assert.equal(r.status, 503, r.text);
    assert.equal(t.sql('SELECT max(tree_size) FROM log_checkpoint'), '3');
  } finally {
    await twin?.stop();
    await t.srv.stop();
  }
});
