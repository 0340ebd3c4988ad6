// The UI's pure modules (static/js/jcs.js, logcheck.js, bytes.js) run unchanged in Node 20
// (WebCrypto is global there): check them against the published vectors in tests/data/vectors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from '../integration/lib/harness.mjs';

import { canonicalize, JcsError } from '../../static/js/jcs.js';
import { fromBase64, toBase64, toHex, fromHex } from '../../static/js/bytes.js';
import { verifyInclusion, verifyCheckpoint, verifyNoteSignature, parseCheckpointBody, leafHash } from '../../static/js/logcheck.js';

const vectors = path.join(dataDir, 'vectors');

test('jcs.js reproduces every RFC 8785 vector byte for byte', () => {
  const dir = path.join(vectors, 'jcs');
  const names = fs.readdirSync(path.join(dir, 'input')).filter((n) => n.endsWith('.json'));
  assert.ok(names.length >= 6);
  for (const name of names) {
    const input = JSON.parse(fs.readFileSync(path.join(dir, 'input', name), 'utf8'));
    const want = fs.readFileSync(path.join(dir, 'output', name));
    const got = Buffer.from(canonicalize(input), 'utf8');
    assert.equal(got.toString('hex'), want.toString('hex'), name);
  }
});

test('jcs.js refuses lone surrogates and, for records, non-integers', () => {
  assert.throws(() => canonicalize({ a: 'x\ud800y' }), (e) => e instanceof JcsError && e.pointer === '/a');
  assert.throws(() => canonicalize({ ['k\udc00']: 1 }), JcsError);
  assert.throws(() => canonicalize(['\ud83d']), (e) => e.pointer === '/0');
  assert.equal(canonicalize({ s: '\ud83d\ude02' }), '{"s":"\ud83d\ude02"}');
  assert.throws(() => canonicalize({ amount: 1.5 }, { integersOnly: true }), (e) => e.pointer === '/amount');
  assert.throws(() => canonicalize({ n: 2 ** 53 }, { integersOnly: true }), JcsError);
  assert.equal(canonicalize({ n: 2 ** 53 - 1, b: [true, null] }, { integersOnly: true }), '{"b":[true,null],"n":9007199254740991}');
  assert.throws(() => canonicalize({ u: undefined }), JcsError);
  assert.throws(() => canonicalize(NaN), JcsError);
  // Keys sort by UTF-16 code units: U+1F602 (d83d) before U+FB33.
  assert.equal(canonicalize({ '\ufb33': 1, '\ud83d\ude02': 2 }), '{"\ud83d\ude02":2,"\ufb33":1}');
  assert.equal(canonicalize({ c: '\u001f\n' }), '{"c":"\\u001f\\n"}');
});

test('bytes.js base64 and hex are strict and round-trip', () => {
  const b = new Uint8Array([0, 1, 254, 255, 128]);
  assert.deepEqual(fromBase64(toBase64(b)), b);
  assert.deepEqual(fromHex(toHex(b)), b);
  assert.throws(() => fromBase64('AAE'));
  assert.throws(() => fromBase64('AA-_'));
  assert.throws(() => fromHex('0G'));
});

test('logcheck.js agrees with every transparency-dev inclusion vector', async () => {
  const root = path.join(vectors, 'merkle/testdata/inclusion');
  let checked = 0;
  let positives = 0;
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]);
  for (const file of walk(root).filter((f) => f.endsWith('.json'))) {
    const v = JSON.parse(fs.readFileSync(file, 'utf8'));
    const proof = (v.proof || []).map(fromBase64);
    const ok = await verifyInclusion(v.leafIdx, v.treeSize, fromBase64(v.leafHash || ''), proof, fromBase64(v.root || ''));
    assert.equal(ok, !v.wantErr, path.relative(root, file));
    checked++;
    if (ok) positives++;
  }
  assert.ok(checked > 90 && positives > 3, `${checked} vectors, ${positives} positive`);
});

test('logcheck.js leaf hash matches roots.json', async () => {
  const r = JSON.parse(fs.readFileSync(path.join(vectors, 'merkle/roots.json'), 'utf8'));
  const inputs = r.leaf_inputs_hex;
  const hashes = r.leaf_hashes_hex;
  assert.equal(inputs.length, 8);
  for (let i = 0; i < inputs.length; i++) {
    assert.equal(toHex(await leafHash(fromHex(inputs[i]))), hashes[i]);
  }
});

test('logcheck.js verifies a C2SP signed note and rejects a tampered one', async () => {
  const ex = JSON.parse(fs.readFileSync(path.join(vectors, 'signed-note/examples.json'), 'utf8'));
  const tree = ex.tlog_tree;
  assert.equal(parseCheckpointBody(tree.golden_text).size, tree.tree_size);
  // A checkpoint signed here with a fresh key, then the published Go vector (not a checkpoint
  // body, so only its signature is checked).
  const keys = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
  const pk = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey));
  const origin = 'example.test/log';
  const idFull = new Uint8Array(await crypto.subtle.digest('SHA-256', Buffer.concat([Buffer.from(origin + '\n'), Buffer.from([1]), pk])));
  const keyId = idFull.slice(0, 4);
  const body = `${origin}\n5\n${tree.root_hash_base64}\n`;
  const sig = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, keys.privateKey, Buffer.from(body)));
  const note = `${body}\n\u2014 ${origin} ${toBase64(new Uint8Array([...keyId, ...sig]))}\n`;
  const vkey = `${origin}+${toHex(keyId)}+${toBase64(new Uint8Array([1, ...pk]))}`;
  const got = await verifyCheckpoint(note, vkey);
  assert.equal(got.size, 5);
  await assert.rejects(verifyCheckpoint(note.replace('\n5\n', '\n6\n'), vkey), /does not verify/);
  // And the published Go vector: PeterNeumann's verifier key against its signed message.
  const peter = ex.signed_note.verifier_keys.find((k) => k.name === 'PeterNeumann');
  const signed = await verifyNoteSignature(ex.signed_note.signed_message_peter, peter.vkey);
  assert.equal(signed.text, ex.signed_note.text);
  await assert.rejects(verifyNoteSignature(ex.signed_note.signed_message_peter.replace('answer', 'Answer'), peter.vkey),
                       /does not verify/);
  const enoch = ex.signed_note.verifier_keys.find((k) => k.name === 'EnochRoot');
  await assert.rejects(verifyNoteSignature(ex.signed_note.signed_message_peter, enoch.vkey), /no signature by EnochRoot/);
});

test('every UI module links: each named import exists in the module it names', async () => {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../static/js');
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]);
  const files = walk(root).filter((f) => f.endsWith('.js'));
  assert.ok(files.length > 10);
  // Importing links the whole graph; a missing export is a SyntaxError here, as in the browser.
  for (const f of files) await import(f);
  // app.js touches the document as it loads, so check its imports by name instead.
  const appJs = path.join(root, '..', 'app.js');
  const src = fs.readFileSync(appJs, 'utf8');
  let checked = 0;
  for (const m of src.matchAll(/import \{([^}]+)\} from '([^']+)'/g)) {
    const mod = await import(path.resolve(path.dirname(appJs), m[2]));
    for (const name of m[1].split(',').map((x) => x.trim()).filter(Boolean)) {
      assert.ok(name in mod, `app.js imports ${name} from ${m[2]}, which does not export it`);
      checked++;
    }
  }
  assert.ok(checked >= 10);
});
