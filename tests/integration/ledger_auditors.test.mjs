// docs/auditors.md runs as written: every ```sh block of the page, in order, against a live
// server with a few signed decisions — curl, capledger verify, openssl and python3 — and the
// stock-tool checks fail when a byte is changed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectDir, startServer } from './lib/harness.mjs';
import { bin } from './lib/cli.mjs';
import { addOwner, addUser, createReview, postDecision, record } from './ledger.lib.mjs';

let srv;
let dir;
before(async () => {
  srv = await startServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-auditor-'));
  // The page's commands run in a capledger checkout, where scripts/run built build/capledger:
  // the auditor's scratch folder gets that path to the binary under test.
  fs.mkdirSync(path.join(dir, 'build'));
  fs.symlinkSync(path.resolve(bin), path.join(dir, 'build', 'capledger'));
});
after(async () => {
  await srv?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const sh = (script, env = {}) => spawnSync('bash', ['-c', script], {
  cwd: dir,
  encoding: 'utf8',
  timeout: 120_000,
  env: { ...process.env, PATH: `${path.dirname(path.resolve(bin))}:${process.env.PATH}`, ...env },
});

test('the commands of docs/auditors.md verify a live bundle with capledger, openssl and python3', async () => {
  const olga = await addOwner(srv, 'olga');
  const auditor = addUser(srv, 'audrey', 'auditor');
  const review = await createReview(srv.url, olga, []);
  for (const decision of ['revise', 'revise', 'stop', 'revise', 'revise']) {
    const r = await postDecision(srv.url, olga, record(olga, review.id, { decision, baseline: 'naïve “quotes” and \u2028 line separator' }));
    assert.equal(r.status, 201, r.text);
  }
  const page = fs.readFileSync(path.join(projectDir, 'docs/auditors.md'), 'utf8');
  const blocks = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 5, 'the page has its command blocks');
  const r = sh(`set -euo pipefail\n${blocks.join('\n')}`, { CAPLEDGER_URL: srv.url, TOKEN: auditor.token });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  const out = `${r.stdout}${r.stderr}`;
  assert.equal(out.match(/Signature Verified Successfully/g)?.length, 2, out);
  // 6 leaves: olga's key enrolment, then her five decisions.
  assert.match(out, /verified: checkpoint signed by localhost\/capledger with the key you hold; 6 leaves/);
  assert.match(out, /^approver olga, key [0-9a-f]{64} \(enrolled by leaf 0\): signed leaves 1-5$/m);
  assert.match(out, /the bundle names the verifier key you kept/);
  assert.match(out, /signed by olga, key [0-9a-f]{64}/);
  assert.match(out, /checkpoint of localhost\/capledger: 6 leaves, root [0-9a-f]{64}/);
  assert.match(out, /root over all 6 leaves matches; leaf 0 is in the tree \(proof of 3 hashes\)/);

  // One changed byte and openssl refuses: the record the owner signed, the checkpoint text.
  const flip = (file) => {
    const b = fs.readFileSync(path.join(dir, file));
    b[b.length - 3] ^= 1;
    fs.writeFileSync(path.join(dir, file), b);
  };
  flip('message.bin');
  flip('checkpoint.txt');
  for (const [key, msg, sig] of [['approver.pem', 'message.bin', 'signature.bin'], ['server.pem', 'checkpoint.txt', 'checkpoint.sig']]) {
    const v = sh(`openssl pkeyutl -verify -pubin -inkey ${key} -rawin -in ${msg} -sigfile ${sig}`);
    assert.notEqual(v.status, 0, `${msg}: ${v.stdout}`);
    assert.match(`${v.stdout}${v.stderr}`, /Signature Verification Failure/);
  }
});
