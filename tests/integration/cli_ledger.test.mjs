// The offline ledger commands against an independent implementation: Node's own crypto builds
// keys, signed decisions, an RFC 9162 tree and a C2SP checkpoint, and `capledger verify` must
// accept exactly that bundle and reject each tampered copy, naming the bad item. No database.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDir } from './lib/harness.mjs';

const BIN = process.env.CAPLEDGER_BIN || 'build/capledger';
const ORIGIN = 'localhost/capledger';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-cli-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function run(...args) {
  return spawnSync(BIN, args, { encoding: 'utf8', cwd: dir });
}

// RFC 8785 for the values used here: JavaScript's own sort is by UTF-16 code units and
// JSON.stringify prints numbers in ECMAScript form, which is what the RFC specifies.
function jcs(v) {
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  if (v !== null && typeof v === 'object')
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
  return JSON.stringify(v);
}
const sha256 = (b) => crypto.createHash('sha256').update(b).digest();
const rawPublicKey = (key) => Buffer.from(key.export({ format: 'jwk' }).x, 'base64url');
const leafHash = (b) => sha256(Buffer.concat([Buffer.from([0]), b]));
const nodeHash = (l, r) => sha256(Buffer.concat([Buffer.from([1]), l, r]));
function mth(hashes) {
  if (hashes.length === 0) return sha256(Buffer.alloc(0));
  if (hashes.length === 1) return hashes[0];
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return nodeHash(mth(hashes.slice(0, k)), mth(hashes.slice(k)));
}
function signedCheckpoint(privateKey, publicRaw, size, root) {
  const body = `${ORIGIN}\n${size}\n${root.toString('base64')}\n`;
  const keyId = sha256(Buffer.concat([Buffer.from(ORIGIN + '\n'), Buffer.from([1]), publicRaw])).subarray(0, 4);
  const sig = crypto.sign(null, Buffer.from(body), privateKey);
  return `${body}\n\u2014 ${ORIGIN} ${Buffer.concat([keyId, sig]).toString('base64')}\n`;
}

// The comparison every decision cites: by default a small stand-in (verify checks only its
// hashes); --recompute needs a real scenario and the engine's result for it.
function makeBundle(real) {
  const log = crypto.generateKeyPairSync('ed25519');
  const alice = crypto.generateKeyPairSync('ed25519');
  const logPk = rawPublicKey(log.publicKey);
  const alicePk = rawPublicKey(alice.publicKey);
  const aliceId = sha256(alicePk).toString('hex');
  const scenario = real ? real.scenario : { kind: 'inference', options: [{ name: 'l4', price_per_hour: 0.8 }] };
  const result = real ? real.result : {
    engine_version: 'capledger-cost/1.0.0', input_sha256: sha256(jcs(scenario)).toString('hex'),
    winner: 'l4', options: [{ name: 'l4', expected_total_cost: 21297.6, ratio: 1e-7 }] };
  const comparison = sha256(jcs(result)).toString('hex');
  const leaves = [];
  for (let i = 0; i < 5; i++) {
    const record = { id: `7d444840-9dc0-11d1-b245-5ffdce74fa0${i}`, review_id: 'r-1',
                     decision: i === 0 ? 'advance' : 'revise', comparison_sha256: [comparison],
                     evidence: ['b-1'], question: 'Which arrangement? \u00e9 \u{1F602}',
                     created_at: `2025-09-12T14:06:0${i}Z`, signer_key_id: aliceId };
    const msg = Buffer.concat([Buffer.from('capledger-decision-v1\n'), Buffer.from(jcs(record))]);
    const signature = crypto.sign(null, msg, alice.privateKey).toString('base64');
    leaves.push(Buffer.from(jcs({ record, signature, public_key: alicePk.toString('base64'),
                                  received_at: `2025-09-12T14:07:0${i}.123456Z` })));
  }
  const hashes = leaves.map(leafHash);
  const keyId = sha256(Buffer.concat([Buffer.from(ORIGIN + '\n'), Buffer.from([1]), logPk])).subarray(0, 4);
  const bundle = {
    origin: ORIGIN,
    verifier_key: `${ORIGIN}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([1]), logPk]).toString('base64')}`,
    checkpoint: signedCheckpoint(log.privateKey, logPk, leaves.length, mth(hashes)),
    leaves: leaves.map((b) => b.toString('base64')),
    signer_keys: { [aliceId]: { public_key: alicePk.toString('base64'), owner: 'alice', revoked_at: null } },
    comparisons: { [comparison]: { scenario, result } },
  };
  return { bundle, log, logPk, hashes, comparison };
}

// With --key: the verifier key the log was made with (no tampered copy below changes it).
function verify(bundle, ...extra) {
  const file = path.join(dir, `bundle-${crypto.randomUUID()}.json`);
  fs.writeFileSync(file, JSON.stringify(bundle));
  const key = path.join(dir, `key-${crypto.randomUUID()}.vkey`);
  fs.writeFileSync(key, `${bundle.verifier_key}\n`);
  return run('verify', file, '--key', key, ...extra);
}

test('a bundle built by Node crypto verifies, with and without an older checkpoint', () => {
  const { bundle, log, logPk, hashes } = makeBundle();
  let r = verify(bundle);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^verified: .*5 leaves/);
  for (const size of [0, 1, 3, 5]) {
    const old = path.join(dir, `old-${size}.txt`);
    fs.writeFileSync(old, signedCheckpoint(log.privateKey, logPk, size, mth(hashes.slice(0, size))));
    r = verify(bundle, '--previous-checkpoint', old);
    assert.equal(r.status, 0, `size ${size}: ${r.stderr}`);
  }
  const forked = hashes.slice(0, 3);
  forked[1] = leafHash(Buffer.from('something else'));
  const old = path.join(dir, 'old-forked.txt');
  fs.writeFileSync(old, signedCheckpoint(log.privateKey, logPk, 3, mth(forked)));
  r = verify(bundle, '--previous-checkpoint', old);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /previous checkpoint: its tree of size 3 is not a prefix/);
});

test('verify needs the verifier key the auditor holds; a forged bundle re-signed by another key fails', () => {
  const { bundle, hashes } = makeBundle();
  const file = path.join(dir, 'held.json');
  fs.writeFileSync(file, JSON.stringify(bundle));
  // No key: nothing is called verified, exit 2, and the reason is given.
  let r = spawnSync(BIN, ['verify', file], { encoding: 'utf8', cwd: dir, env: { ...process.env, CAPLEDGER_VERIFIER_KEY: '' } });
  assert.equal(r.status, 2);
  assert.doesNotMatch(r.stdout, /verified/);
  assert.match(r.stderr, /NOT verified: no verifier key.*--key FILE.*CAPLEDGER_VERIFIER_KEY/s);
  // The key from the environment.
  r = spawnSync(BIN, ['verify', file], { encoding: 'utf8', cwd: dir, env: { ...process.env, CAPLEDGER_VERIFIER_KEY: bundle.verifier_key } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^verified: checkpoint signed by localhost\/capledger with the key you hold/);
  // Dropped leaf, rebuilt root, checkpoint signed by the forger's key named in the bundle.
  const forger = crypto.generateKeyPairSync('ed25519');
  const forgerPk = rawPublicKey(forger.publicKey);
  const forged = structuredClone(bundle);
  forged.leaves.splice(2, 1);
  const kept = hashes.filter((_, i) => i !== 2);
  forged.checkpoint = signedCheckpoint(forger.privateKey, forgerPk, kept.length, mth(kept));
  const keyId = sha256(Buffer.concat([Buffer.from(ORIGIN + '\n'), Buffer.from([1]), forgerPk])).subarray(0, 4);
  forged.verifier_key = `${ORIGIN}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([1]), forgerPk]).toString('base64')}`;
  r = verify(forged); // trusting the bundle's own key: it "verifies" — which is why verify needs --key
  assert.equal(r.status, 0, r.stderr);
  const heldKey = path.join(dir, 'server.vkey');
  fs.writeFileSync(heldKey, bundle.verifier_key);
  fs.writeFileSync(file, JSON.stringify(forged));
  r = run('verify', file, '--key', heldKey);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /FAILED: verifier_key: the bundle names .* not the verifier key you hold/);
  forged.verifier_key = bundle.verifier_key;
  fs.writeFileSync(file, JSON.stringify(forged));
  r = run('verify', file, '--key', heldKey);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /FAILED: checkpoint: no signature by the verifier key/);
});

test('verify --approvers pins who may sign and prints each approver\'s leaves', () => {
  const { bundle } = makeBundle();
  const file = path.join(dir, 'approvers.json');
  fs.writeFileSync(file, JSON.stringify(bundle));
  const heldKey = path.join(dir, 'pinned.vkey');
  fs.writeFileSync(heldKey, `${bundle.verifier_key}\n`);
  const [aliceId, alice] = Object.entries(bundle.signer_keys)[0];
  const other = rawPublicKey(crypto.generateKeyPairSync('ed25519').publicKey).toString('base64');
  const approvers = path.join(dir, 'approvers.txt');
  fs.writeFileSync(approvers, `# keys collected from the owners in person\n${alice.public_key} alice\n\n${other}\n`);
  let r = run('verify', file, '--key', heldKey, '--approvers', approvers);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /every signer is an approver key you hold/);
  assert.match(r.stdout, new RegExp(`^approver alice, key ${aliceId} \\(one you hold\\): signed leaves 0-4$`, 'm'));
  assert.match(r.stdout, /^approver \(not in the log\), key [0-9a-f]{64} \(one you hold\): signed no leaves$/m);
  fs.writeFileSync(approvers, `${other}\n`);
  r = run('verify', file, '--key', heldKey, '--approvers', approvers);
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`FAILED: leaf 0: signed by key ${aliceId} \\(of "alice"\\), which is not one of the approver keys you hold`));
  // Without --approvers the signers are still listed, for comparison with keys held elsewhere.
  r = run('verify', file, '--key', heldKey);
  assert.match(r.stdout, new RegExp(`^approver alice, key ${aliceId}: signed leaves 0-4$`, 'm'));
});

test('verify --recompute reruns the engine on a comparison made by capledger compare', () => {
  const scenarioFile = path.join(dataDir, 'spec/example-inference.json');
  const c = spawnSync(BIN, ['compare', scenarioFile], { encoding: 'utf8' });
  assert.equal(c.status, 0, c.stderr);
  const result = JSON.parse(c.stdout);
  const scenario = JSON.parse(fs.readFileSync(scenarioFile, 'utf8'));
  const { bundle } = makeBundle({ scenario, result });
  let r = verify(bundle, '--recompute');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /recomputed within 1e-9/);
  // Another engine version is reported, not failed.
  const older = { ...structuredClone(result), engine_version: 'capledger-cost/0.0.1' };
  bundle.comparisons[sha256(jcs(older)).toString('hex')] = { scenario, result: older };
  r = verify(bundle, '--recompute');
  assert.match(r.stderr, /note: comparison [0-9a-f]{64}: stored by engine capledger-cost\/0.0.1/);
  assert.equal(r.status, 0, r.stderr);
});

test('each tampered copy fails and names the bad item', () => {
  const { bundle, comparison } = makeBundle();
  const copy = () => structuredClone(bundle);

  let b = copy();
  const leaf = Buffer.from(b.leaves[2], 'base64').toString().replace('"revise"', '"advance"');
  b.leaves[2] = Buffer.from(leaf).toString('base64');
  let r = verify(b);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /leaf 2: approver signature does not verify/);

  b = copy();
  b.comparisons[comparison].result.options[0].expected_total_cost = 1;
  r = verify(b);
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`comparison ${comparison}: its result hashes to`));

  b = copy();
  b.leaves.splice(3, 1);
  r = verify(b);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /the checkpoint covers 5 leaves but the bundle has 4/);

  b = copy();
  const parsed = JSON.parse(Buffer.from(b.leaves[1], 'base64'));
  parsed.signature = JSON.parse(Buffer.from(b.leaves[0], 'base64')).signature;
  b.leaves[1] = Buffer.from(jcs(parsed)).toString('base64');
  r = verify(b);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /leaf 1: approver signature does not verify/);

  b = copy();
  b.checkpoint = b.checkpoint.replace(/\n5\n/, '\n6\n');
  r = verify(b);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /checkpoint: signature does not verify/);
});

test('keygen and sign produce what Node crypto verifies; keygen refuses to overwrite', () => {
  let r = run('keygen', 'k');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(fs.statSync(path.join(dir, 'k')).mode & 0o777, 0o600);
  assert.match(fs.readFileSync(path.join(dir, 'k'), 'utf8'), /^[0-9a-f]{64}\n$/);
  const pk = Buffer.from(fs.readFileSync(path.join(dir, 'k.pub'), 'utf8').trim(), 'base64');
  assert.equal(pk.length, 32);
  r = run('keygen', 'k');
  assert.equal(r.status, 1);

  fs.writeFileSync(path.join(dir, 'record.json'), JSON.stringify({
    id: '7d444840-9dc0-11d1-b245-5ffdce74fad2', review_id: 'r-1', decision: 'stop',
    comparison_sha256: [], evidence: [], created_at: '2025-09-12T14:06:12Z',
    expected_operating_cost: { amount: '128450.00', currency: 'USD', period: 'quarter' } }));
  r = run('sign', '--key', 'k', 'record.json');
  assert.equal(r.status, 0, r.stderr);
  const { record, signature } = JSON.parse(r.stdout);
  assert.equal(record.signer_key_id, sha256(pk).toString('hex'));
  const spki = crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pk]),
                                        format: 'der', type: 'spki' });
  const msg = Buffer.concat([Buffer.from('capledger-decision-v1\n'), Buffer.from(jcs(record))]);
  assert.ok(crypto.verify(null, msg, spki, Buffer.from(signature, 'base64')));

  fs.writeFileSync(path.join(dir, 'bad.json'), '{"decision": "maybe", "amount": 1.5}');
  r = run('sign', '--key', 'k', 'bad.json');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /\/decision: must be one of advance, revise, stop/);
  assert.match(r.stderr, /\/amount: unknown field/);
});

test('jcs prints the published RFC 8785 outputs and refuses duplicate keys', () => {
  for (const name of ['arrays', 'french', 'structures', 'unicode', 'values', 'weird']) {
    const r = spawnSync(BIN, ['jcs', path.join(dataDir, 'vectors/jcs/input', `${name}.json`)]);
    assert.equal(r.status, 0);
    assert.deepEqual(r.stdout, fs.readFileSync(path.join(dataDir, 'vectors/jcs/output', `${name}.json`)));
  }
  fs.writeFileSync(path.join(dir, 'dup.json'), '{"a":1,"a":2}');
  const r = run('jcs', 'dup.json');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /duplicate object key/);
});

test('jcs canonicalizes U+0000 like any I-JSON character: the lower-case \\u0000 escape', () => {
  // Written here: the published vectors hold no U+0000. JSON.stringify (ECMAScript, which RFC
  // 8785 follows for strings) gives the expected bytes.
  const doc = { b: 'x\u0000y', a: ['\u0000', '\u0000\u001f\u007f'] };
  fs.writeFileSync(path.join(dir, 'nul.json'), '{"b": "x\\u0000y", "a": ["\\u0000", "\\u0000\\u001F\\u007f"]}');
  const r = spawnSync(BIN, ['jcs', 'nul.json'], { cwd: dir });
  assert.equal(r.status, 0, r.stderr.toString());
  assert.equal(r.stdout.toString(), jcs(doc));
  assert.equal(r.stdout.toString(), '{"a":["\\u0000","\\u0000\\u001f\u007f"],"b":"x\\u0000y"}');
});

test('a bundle read from a pipe (a FIFO, <(curl …)) verifies as from a file', async () => {
  const { bundle } = makeBundle();
  const fifo = path.join(dir, `fifo-${crypto.randomUUID()}`);
  const { execFileSync, spawn } = await import('node:child_process');
  execFileSync('mkfifo', [fifo]);
  const key = path.join(dir, `key-${crypto.randomUUID()}.vkey`);
  fs.writeFileSync(key, `${bundle.verifier_key}\n`);
  const child = spawn(BIN, ['verify', fifo, '--key', key], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  child.stdout.on('data', (c) => { out += c; });
  child.stderr.on('data', (c) => { err += c; });
  fs.writeFileSync(fifo, JSON.stringify(bundle)); // blocks until verify opens it, then one pass
  const status = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(status, 0, err);
  assert.match(out, /^verified: .*5 leaves/);
});
