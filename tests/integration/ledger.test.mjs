// The signed decision log end to end: owners sign decisions with their own Ed25519 keys (made
// here with node:crypto), the gate refuses an unsupported advance listing every unmet
// condition, revise and stop always go through, proofs from the API verify in plain
// JavaScript, the audit bundle verifies with `capledger verify`, and tampering directly in
// PostgreSQL is caught and named.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, psql, startServer } from './lib/harness.mjs';
import { cli, mintToken } from './lib/cli.mjs';
import {
  addOwner, addUser, buildEvidence, createReview, currentDecision, jcs, leafHash, merkleRoot,
  openCheckpoint, postDecision, record, sha256hex, verifyBundle, verifyConsistency, verifyInclusion,
} from './ledger.lib.mjs';

let srv;
let admin;
let olga;     // owner who signs
let pavel;    // another owner
let auditor;
let member;   // a team member
let ev;       // stored evidence
let review;

const sql = (q) => psql(q, { database: srv.db });
const get = (p, who = auditor) => api(srv.url, 'GET', p, { token: who.token });

before(async () => {
  srv = await startServer();
  admin = { name: 'admin', token: mintToken(srv, 'admin') };
  olga = await addOwner(srv, 'olga');
  pavel = await addOwner(srv, 'pavel');
  auditor = addUser(srv, 'audrey', 'auditor');
  ev = await buildEvidence(srv.url, admin, olga);
  member = addUser(srv, 'tom', 'team', [ev.team]);
  review = await createReview(srv.url, olga, [ev.workloadId]);
});
after(async () => { await srv?.stop(); });

const errorsOf = (r) => r.json.errors.map((e) => `${e.pointer} ${e.message}`);

test('an owner signs a revise decision: 201 with checkpoint and an inclusion proof that verifies', async () => {
  const rec = record(olga, review.id, { decision: 'revise', comparison_sha256: [ev.comparison.sha256] });
  const r = await postDecision(srv.url, olga, rec);
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.id, rec.id);
  const key = (await get('/api/v1/log/key')).text;
  const cp = openCheckpoint(r.json.checkpoint, key);
  assert.equal(cp.origin, 'localhost/capledger');
  assert.equal(cp.size, r.json.leaf_index + 1);
  // The leaf is JCS({record, signature, public_key, received_at}): rebuild it from what we sent.
  const entries = await get(`/api/v1/log/entries?start=${r.json.leaf_index}&end=${r.json.leaf_index + 1}`);
  assert.equal(entries.status, 200, entries.text);
  const leaf = Buffer.from(entries.json.leaves[0], 'base64');
  const parsed = JSON.parse(leaf.toString());
  assert.deepEqual(parsed.record, rec);
  assert.equal(parsed.public_key, olga.publicKeyB64);
  assert.equal(parsed.received_at, r.json.received_at);
  assert.equal(leaf.toString(), jcs(parsed));
  const proof = r.json.inclusion_proof.hashes.map((h) => Buffer.from(h, 'hex'));
  assert.ok(verifyInclusion(r.json.leaf_index, cp.size, leafHash(leaf), proof, cp.root));
  // The decision reads back, and the review is decided.
  const d = await get(`/api/v1/decisions/${rec.id}`);
  assert.equal(d.status, 200);
  assert.equal(d.json.leaf_index, r.json.leaf_index);
  assert.equal(d.json.signer, 'olga');
  assert.equal((await get(`/api/v1/reviews/${review.id}`)).json.status, 'decided');
  // Audit trail row for the append.
  assert.equal(sql(`SELECT actor_name || ' ' || action FROM audit_event WHERE target_id = '${rec.id}'`), 'olga decision.append');
});

test('the gate refuses an unsupported advance and lists every unmet condition', async () => {
  const bare = await createReview(srv.url, olga, [ev.workloadId], { title: 'bare' });
  // A workload with no dataset location: the data-path item cannot be covered.
  const rec = record(olga, bare.id, { decision: 'advance', owner: null, accepted_by: null, comparison_sha256: [], chosen_option: null });
  const r = await postDecision(srv.url, olga, rec);
  assert.equal(r.status, 422, r.text);
  assert.match(r.json.detail, /gate refuses/);
  const errs = errorsOf(r);
  for (const item of ['workload and memory profile', 'data and storage path', 'effective GPU utilisation',
    'queue and provisioning delay', 'engineering setup and support', 'completed-result and service-level cost']) {
    assert.ok(errs.some((e) => e.includes(`checklist item '${item}' is not covered`)), `${item} named in ${errs.join('\n')}`);
  }
  // Failure evidence (25 runs of the team and class) is stored, so that item is covered.
  assert.ok(!errs.some((e) => e.includes("'failure and rerun rate'")));
  assert.ok(errs.some((e) => e.startsWith('/record/owner ')));
  assert.ok(errs.some((e) => e.startsWith('/record/accepted_by ')));
  assert.ok(errs.some((e) => e.startsWith('/record/comparison_sha256 ')));
  assert.equal(r.json.error_count, errs.length);
  // Nothing was appended, and the review stays open.
  assert.equal(sql(`SELECT count(*) FROM decision WHERE id = '${rec.id}'`), '0');
  assert.equal((await get(`/api/v1/reviews/${bare.id}`)).json.status, 'open');
  // The same review takes revise and stop without any evidence.
  for (const decision of ['revise', 'stop']) {
    const ok = await postDecision(srv.url, olga, record(olga, bare.id, { decision, owner: null, accepted_by: null }));
    assert.equal(ok.status, 201, ok.text);
  }
});

test('the checklist is covered by the stored evidence, and a supported advance goes through', async () => {
  const c = await get(`/api/v1/reviews/${review.id}/checklist?comparison=${ev.comparison.sha256}`, olga);
  assert.equal(c.status, 200, c.text);
  assert.equal(c.json.items.length, 7);
  for (const item of c.json.items) assert.deepEqual(item.missing, [], `${item.item}: ${item.missing}`);
  assert.equal(c.json.covered, true);
  const util = c.json.items.find((i) => i.item === 'effective GPU utilisation');
  assert.ok(util.evidence.includes(ev.benchmarkIds['h100-on-demand']));
  const fail = c.json.items.find((i) => i.item === 'failure and rerun rate');
  assert.ok(fail.evidence.includes(ev.runUploadId));

  const winner = ev.result.winner;
  assert.equal(winner, 'h100-on-demand');
  const base = { decision: 'advance', comparison_sha256: [ev.comparison.sha256], evidence: [ev.benchmarkIds[winner], ev.runUploadId] };

  // Infeasible option: refused, with the reason.
  let r = await postDecision(srv.url, olga, record(olga, review.id, { ...base, chosen_option: 'l40s-on-demand', justification: 'cheaper cards' }));
  assert.equal(r.status, 422, r.text);
  assert.ok(errorsOf(r).some((e) => /^\/record\/chosen_option option 'l40s-on-demand' is infeasible .*memory/.test(e)), errorsOf(r).join('\n'));

  // Not the winner, no justification: refused, naming the winner.
  r = await postDecision(srv.url, olga, record(olga, review.id, { ...base, chosen_option: 'a100-spot' }));
  assert.equal(r.status, 422, r.text);
  assert.deepEqual(errorsOf(r), [`/record/justification option 'a100-spot' is not the winner ('${winner}') of comparison ${ev.comparison.sha256}: a justification is required`]);

  // With a justification it is recorded.
  r = await postDecision(srv.url, olga, record(olga, review.id, { ...base, chosen_option: 'a100-spot', justification: 'the H100 quota is committed elsewhere this quarter' }));
  assert.equal(r.status, 201, r.text);

  // The winner needs nothing more.
  r = await postDecision(srv.url, olga, record(olga, review.id, { ...base, chosen_option: winner }));
  assert.equal(r.status, 201, r.text);
});

test('records are checked against stored data, keys and signatures', async () => {
  const rec = record(olga, review.id);
  assert.equal((await postDecision(srv.url, olga, rec)).status, 201);
  // Reused id → 409.
  let r = await postDecision(srv.url, olga, rec);
  assert.equal(r.status, 409, r.text);
  // With an Idempotency-Key, a retry of the same body gets the first reply; nothing is appended twice.
  const retry = record(olga, review.id, { supersedes: rec.id });
  const body = { record: retry, signature: (await import('./ledger.lib.mjs')).signRecord(olga, retry) };
  const headers = { 'Idempotency-Key': `retry-${retry.id}` };
  const first = await api(srv.url, 'POST', '/api/v1/decisions', { token: olga.token, body, headers });
  assert.equal(first.status, 201, first.text);
  const again = await api(srv.url, 'POST', '/api/v1/decisions', { token: olga.token, body, headers });
  assert.equal(again.status, 201, again.text);
  assert.equal(again.headers['idempotency-replayed'], 'true');
  assert.deepEqual(again.json, first.json);
  assert.equal(sql(`SELECT count(*) FROM decision WHERE id = '${retry.id}'`), '1');
  // Its instance killed after the append committed, before the reply was kept (the claim left
  // pending, its session gone): the retry is recognised as the same signed record and answered
  // 200 with the stored decision — decisions opt out of "reply lost".
  sql(`UPDATE idempotency SET status = NULL, response = NULL, claim_pid = 0 WHERE key = 'retry-${retry.id}'`);
  const lost = await api(srv.url, 'POST', '/api/v1/decisions', { token: olga.token, body, headers });
  assert.equal(lost.status, 200, lost.text);
  assert.equal(lost.json.id, retry.id);
  assert.equal(lost.json.leaf_index, first.json.leaf_index);
  assert.equal(sql(`SELECT count(*) FROM decision WHERE id = '${retry.id}'`), '1');
  // supersedes: unknown, or of another review → 422; an earlier one of the same review → 201.
  const other = await createReview(srv.url, olga, [ev.workloadId], { title: 'other' });
  r = await postDecision(srv.url, olga, record(olga, other.id, { supersedes: rec.id }));
  assert.equal(r.status, 422);
  assert.match(errorsOf(r).join('\n'), /^\/record\/supersedes names a decision of another review/m);
  r = await postDecision(srv.url, olga, record(olga, review.id, { supersedes: crypto.randomUUID() }));
  assert.equal(r.status, 422);
  assert.match(errorsOf(r).join('\n'), /^\/record\/supersedes no earlier decision/m);
  r = await postDecision(srv.url, olga, record(olga, review.id, { supersedes: retry.id }));
  assert.equal(r.status, 201, r.text);
  assert.equal((await get(`/api/v1/decisions/${retry.id}`)).json.superseded_by, r.json.id);
  // A decision is superseded once: a second successor would fork the history.
  const fork = await postDecision(srv.url, olga, record(olga, review.id, { supersedes: rec.id }));
  assert.equal(fork.status, 422, fork.text);
  assert.match(errorsOf(fork).join('\n'), /^\/record\/supersedes that decision is already superseded by /m);
  // Unknown comparison, unknown evidence, an option not in the comparison, unknown review.
  r = await postDecision(srv.url, olga, record(olga, crypto.randomUUID(), {
    comparison_sha256: ['0'.repeat(64)], evidence: [crypto.randomUUID()], chosen_option: 'nope',
  }));
  assert.equal(r.status, 422);
  const errs = errorsOf(r).join('\n');
  assert.match(errs, /^\/record\/review_id no review/m);
  assert.match(errs, /^\/record\/comparison_sha256\/0 no stored comparison/m);
  assert.match(errs, /^\/record\/evidence\/0 names no benchmark, upload or stored comparison/m);
  // Shape errors come from the record validator, each with its pointer.
  r = await postDecision(srv.url, olga, record(olga, review.id, { decision: 'maybe', created_at: 'yesterday' }));
  assert.equal(r.status, 422);
  assert.match(errorsOf(r).join('\n'), /^\/record\/decision /m);
  assert.match(errorsOf(r).join('\n'), /^\/record\/created_at /m);
  // A signature over other bytes.
  const tampered = record(olga, review.id, { supersedes: await currentDecision(srv.url, olga.token, review.id) });
  const sig = (await import('./ledger.lib.mjs')).signRecord(olga, { ...tampered, baseline: 'something else' });
  r = await api(srv.url, 'POST', '/api/v1/decisions', { token: olga.token, body: { record: tampered, signature: sig } });
  assert.equal(r.status, 422);
  assert.match(errorsOf(r).join('\n'), /^\/signature does not verify/m);
  // Signing with olga's key while authenticated as pavel → 403.
  r = await postDecision(srv.url, olga, record(olga, review.id), { token: pavel.token });
  assert.equal(r.status, 403, r.text);
  // A key nobody registered.
  r = await postDecision(srv.url, olga, record(olga, review.id, { signer_key_id: 'f'.repeat(64) }));
  assert.equal(r.status, 422);
  assert.match(errorsOf(r).join('\n'), /^\/record\/signer_key_id no signing key/m);
  // Team members and auditors cannot post.
  assert.equal((await postDecision(srv.url, olga, record(olga, review.id), { token: member.token })).status, 403);
  assert.equal((await postDecision(srv.url, olga, record(olga, review.id), { token: auditor.token })).status, 403);
  // A revoked key signs nothing new.
  const revoked = await addOwner(srv, 'rita');
  assert.equal((await postDecision(srv.url, revoked, record(revoked, review.id))).status, 201);
  const del = await api(srv.url, 'DELETE', `/api/v1/me/signing-keys/${revoked.keyId}`, { token: revoked.token });
  assert.ok(del.status === 200 || del.status === 204, del.text);
  r = await postDecision(srv.url, revoked, record(revoked, review.id));
  assert.equal(r.status, 422);
  assert.match(errorsOf(r).join('\n'), /^\/record\/signer_key_id this key was revoked/m);
  // Not JSON of the right shape.
  r = await api(srv.url, 'POST', '/api/v1/decisions', { token: olga.token, body: { record: rec, signature: 'abc', extra: 1 } });
  assert.equal(r.status, 422);
  assert.match(errorsOf(r).join('\n'), /^\/signature must be the standard base64/m);
  assert.match(errorsOf(r).join('\n'), /^\/extra unknown field/m);
});

test('decisions list in log order with a cursor; team members see their teams\' reviews only', async () => {
  const seen = [];
  let cursor = null;
  do {
    const r = await get(`/api/v1/decisions?review=${review.id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(r.status, 200, r.text);
    seen.push(...r.json.items.map((d) => d.leaf_index));
    cursor = r.json.next_cursor;
  } while (cursor);
  assert.ok(seen.length >= 4);
  assert.deepEqual(seen, [...seen].sort((a, b) => a - b));
  const mine = await get(`/api/v1/decisions?review=${review.id}`, member);
  assert.equal(mine.status, 200);
  assert.equal(mine.json.items.length, Math.min(seen.length, 50));
  assert.equal((await api(srv.url, 'POST', '/api/v1/teams', { token: admin.token, body: { name: 'elsewhere' } })).status, 201);
  const stranger = addUser(srv, 'sam', 'team', ['elsewhere']);
  assert.equal((await get(`/api/v1/decisions?review=${review.id}`, stranger)).json.items.length, 0);
  assert.equal((await get(`/api/v1/decisions/${mine.json.items[0].id}`, stranger)).status, 404);
  // The log's entries are for auditors, owners and admins; its public face (checkpoint, key,
  // hash tiles, proofs: no decision content) for anyone, so monitors can follow it.
  assert.equal((await get('/api/v1/log/entries?start=0&end=1', member)).status, 403);
  assert.equal((await get('/api/v1/audit/bundle', member)).status, 403);
  assert.equal((await api(srv.url, 'GET', '/api/v1/log/entries?start=0&end=1')).status, 401);
  assert.equal((await get('/api/v1/log/checkpoint', member)).status, 200);
  const anonymous = await api(srv.url, 'GET', '/api/v1/log/checkpoint');
  assert.equal(anonymous.status, 200);
  assert.match(anonymous.text, /^localhost\/capledger|^[^\n]+\n\d+\n/);
});

test('proofs from the API verify in JavaScript, and bad ranges are 422', async () => {
  const key = (await get('/api/v1/log/key')).text;
  const cp = openCheckpoint((await get('/api/v1/log/checkpoint')).text, key);
  assert.ok(cp.size >= 6);
  const all = (await get(`/api/v1/log/entries?start=0&end=${cp.size}`)).json.leaves.map((b) => Buffer.from(b, 'base64'));
  assert.equal(all.length, cp.size);
  const hashes = all.map(leafHash);
  assert.ok(merkleRoot(hashes).equals(cp.root), 'root over all leaves');
  for (let size = 1; size <= cp.size; size++) {
    const root = merkleRoot(hashes.slice(0, size));
    for (let index = 0; index < size; index++) {
      const p = await get(`/api/v1/log/proof/inclusion?index=${index}&size=${size}`);
      assert.equal(p.status, 200, p.text);
      assert.ok(verifyInclusion(index, size, hashes[index], p.json.hashes.map((h) => Buffer.from(h, 'hex')), root), `inclusion ${index}/${size}`);
    }
    const c = await get(`/api/v1/log/proof/consistency?first=${size}&second=${cp.size}`);
    assert.equal(c.status, 200, c.text);
    assert.ok(verifyConsistency(size, cp.size, root, cp.root, c.json.hashes.map((h) => Buffer.from(h, 'hex'))), `consistency ${size}→${cp.size}`);
  }
  // Every checkpoint the server signed is kept, one per size, each for the right root.
  const stored = sql('SELECT tree_size, encode(root, \'hex\') FROM log_checkpoint ORDER BY tree_size').split('\n');
  assert.equal(stored.length, cp.size + 1);
  stored.forEach((line, size) => {
    const [s, root] = line.split('|');
    assert.equal(Number(s), size);
    assert.equal(root, merkleRoot(hashes.slice(0, size)).toString('hex'));
  });
  for (const q of ['/api/v1/log/proof/inclusion?index=0&size=0', `/api/v1/log/proof/inclusion?index=${cp.size}`,
    '/api/v1/log/proof/consistency?first=0&second=1', `/api/v1/log/proof/consistency?first=1&second=${cp.size + 1}`,
    '/api/v1/log/entries?start=-1', '/api/v1/log/entries', `/api/v1/log/entries?start=0&end=${cp.size + 1}`,
    '/api/v1/log/proof/inclusion?index=x']) {
    const r = await get(q);
    assert.equal(r.status, 422, `${q}: ${r.text}`);
  }
});

test('the audit bundle verifies with capledger verify, also against an older checkpoint', async () => {
  const older = (await get('/api/v1/log/checkpoint')).text;
  assert.equal((await postDecision(srv.url, pavel, record(pavel, review.id, { decision: 'stop' }))).status, 201);
  const b = await get('/api/v1/audit/bundle');
  assert.equal(b.status, 200);
  assert.ok(b.json.comparisons[ev.comparison.sha256].scenario, 'cited comparison with its resolved scenario');
  assert.ok(b.json.comparisons[ev.comparison.sha256].result);
  assert.equal(b.json.signer_keys[olga.keyId].owner, 'olga');
  assert.equal(b.json.signer_keys[olga.keyId].public_key, olga.publicKeyB64);
  assert.ok(b.json.signer_keys[sha256hex(Buffer.from(b.json.signer_keys[olga.keyId].public_key, 'base64'))]);
  const key = (await get('/api/v1/log/key')).text;
  const v = verifyBundle(b.text, key);
  assert.equal(v.status, 0, v.output);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-old-'));
  fs.writeFileSync(path.join(dir, 'old.note'), older);
  const vp = verifyBundle(b.text, key, ['--previous-checkpoint', path.join(dir, 'old.note')]);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(vp.status, 0, vp.output);
  // The CLI signer produces records the server accepts too.
  const dir2 = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-sign-'));
  const keyFile = path.join(dir2, 'owner.key');
  assert.equal(cli(srv, ['keygen', keyFile]).status, 0);
  const cliOwner = { ...addUser(srv, 'carl', 'owner') };
  const pub = fs.readFileSync(`${keyFile}.pub`, 'utf8').trim();
  const reg = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { token: cliOwner.token, body: { public_key: pub, password: cliOwner.password } });
  assert.ok(reg.status === 200 || reg.status === 201, reg.text);
  const rec = record({ name: 'carl', keyId: reg.json.key_id }, review.id, { supersedes: await currentDecision(srv.url, cliOwner.token, review.id) });
  fs.writeFileSync(path.join(dir2, 'record.json'), JSON.stringify(rec));
  const signed = cli(srv, ['sign', '--key', keyFile, path.join(dir2, 'record.json')]);
  fs.rmSync(dir2, { recursive: true, force: true });
  assert.equal(signed.status, 0, signed.stderr);
  const r = await api(srv.url, 'POST', '/api/v1/decisions', { token: cliOwner.token, body: signed.stdout, headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 201, r.text);
});

test('tampering in PostgreSQL is refused by the database, and a superuser\'s tampering is named by capledger verify', async (t) => {
  const bundle = async () => (await get('/api/v1/audit/bundle')).text;
  const key = (await get('/api/v1/log/key')).text;
  assert.equal(verifyBundle(await bundle(), key).status, 0);
  // The database itself refuses to rewrite history.
  assert.throws(() => sql('UPDATE log_leaf SET leaf = leaf WHERE leaf_index = 0'), /append-only/);
  assert.throws(() => sql('DELETE FROM log_leaf WHERE leaf_index = 0'), /append-only/);
  assert.throws(() => sql('DELETE FROM log_checkpoint WHERE tree_size = 1'), /append-only/);
  assert.throws(() => sql('UPDATE comparison SET result = result'), /append-only/);
  assert.throws(() => sql('INSERT INTO log_checkpoint (tree_size, root, note) SELECT 1, root, note FROM log_checkpoint WHERE tree_size = 2'), /duplicate key/);
  assert.throws(() => sql('UPDATE log_head SET size = size + 5'), /only grows/);
  assert.throws(() => sql("INSERT INTO log_leaf (leaf_index, leaf, leaf_hash) VALUES (100000, '\\x00', sha256('\\x00'))"), /gap/);

  // A superuser bypasses triggers (session_replication_role = replica), changes something,
  // and puts it back after capledger verify has named it.
  const asSuperuser = (q) => sql(`SET session_replication_role = replica; ${q}`);
  const tamper = async (change, undo, expected) => {
    asSuperuser(change);
    try {
      const v = verifyBundle(await bundle(), key);
      assert.notEqual(v.status, 0, `verify passed after: ${change}`);
      assert.match(v.output, expected);
      t.diagnostic(`tampered: ${v.output.trim()}`);
    } finally {
      asSuperuser(undo);
    }
    assert.equal(verifyBundle(await bundle(), key).status, 0, 'restored');
  };
  const leaf2 = sql("SELECT encode(leaf, 'hex') FROM log_leaf WHERE leaf_index = 2");
  const text2 = Buffer.from(leaf2, 'hex').toString();
  // One byte of a leaf (a digit of received_at: the approver's signature does not cover it).
  const changedByte = text2.replace(/("received_at":"[^"]*?)(\d)Z"/, (m, head, d) => `${head}${(Number(d) + 1) % 10}Z"`);
  assert.notEqual(changedByte, text2);
  await tamper(`UPDATE log_leaf SET leaf = '\\x${Buffer.from(changedByte).toString('hex')}' WHERE leaf_index = 2`,
    `UPDATE log_leaf SET leaf = '\\x${leaf2}' WHERE leaf_index = 2`, /root/i);
  // The approver's signature inside a leaf.
  const sig = JSON.parse(text2).signature;
  const otherSig = Buffer.from(sig, 'base64');
  otherSig[10] ^= 1;
  const changedSig = text2.replace(sig, otherSig.toString('base64'));
  await tamper(`UPDATE log_leaf SET leaf = '\\x${Buffer.from(changedSig).toString('hex')}' WHERE leaf_index = 2`,
    `UPDATE log_leaf SET leaf = '\\x${leaf2}' WHERE leaf_index = 2`, /leaf 2: .*signature/);
  // The server's signature on the latest checkpoint.
  const size = Number(sql('SELECT max(tree_size) FROM log_checkpoint'));
  const note = sql(`SELECT encode(convert_to(note, 'UTF8'), 'hex') FROM log_checkpoint WHERE tree_size = ${size}`);
  const noteText = Buffer.from(note, 'hex').toString();
  const sigB64 = noteText.trim().split(' ').pop();
  const badNoteSig = Buffer.from(sigB64, 'base64');
  badNoteSig[20] ^= 1;
  await tamper(`UPDATE log_checkpoint SET note = convert_from('\\x${Buffer.from(noteText.replace(sigB64, badNoteSig.toString('base64'))).toString('hex')}', 'UTF8') WHERE tree_size = ${size}`,
    `UPDATE log_checkpoint SET note = convert_from('\\x${note}', 'UTF8') WHERE tree_size = ${size}`, /checkpoint/i);
  // A stored comparison's figures.
  const stored = sql(`SELECT result::text FROM comparison WHERE sha256 = '${ev.comparison.sha256}'`);
  await tamper(`UPDATE comparison SET result = jsonb_set(result, '{options,0,expected_cost_per_outcome}', '1') WHERE sha256 = '${ev.comparison.sha256}'`,
    `UPDATE comparison SET result = '${stored.replace(/'/g, "''")}'::jsonb WHERE sha256 = '${ev.comparison.sha256}'`,
    new RegExp(ev.comparison.sha256));
  // A dropped leaf.
  const leaf3 = sql("SELECT encode(leaf, 'hex') || '|' || encode(leaf_hash, 'hex') || '|' || created_at FROM log_leaf WHERE leaf_index = 3").split('|');
  await tamper('DELETE FROM log_leaf WHERE leaf_index = 3',
    `INSERT INTO log_leaf (leaf_index, leaf, leaf_hash, created_at) VALUES (3, '\\x${leaf3[0]}', '\\x${leaf3[1]}', '${leaf3[2]}')`,
    /leaves|leaf 3/);
});
