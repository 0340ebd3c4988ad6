// Witnesses (c2sp.org/tlog-witness): two `capledger witness serve` processes cosign the log's
// checkpoints, which the server pushes to them from a background thread. One is stopped
// mid-way: decisions go on at full speed, and its cosignatures catch up once it is back. The
// other is shown a fork — another root for a size it cosigned, and a longer tree that does not
// extend it — and refuses both. `capledger verify --witness … --quorum N` counts cosignatures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, freePort, startServer } from './lib/harness.mjs';
import { bin, mintToken } from './lib/cli.mjs';
import { addOwner, addUser, createReview, postDecision, record, signWithServerKey, verifyBundle } from './ledger.lib.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A witness: its key file (capledger keygen), verifier key (capledger witness key) and port.
function makeWitness(dir, name) {
  const keyFile = path.join(dir, `${name}.key`);
  assert.equal(spawnSync(bin, ['keygen', keyFile]).status, 0);
  const r = spawnSync(bin, ['witness', 'key', '--name', name, '--key', keyFile], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return { name, keyFile, vkey: r.stdout.trim(), state: path.join(dir, `${name}.state`) };
}

async function startWitness(w, logKey) {
  const log = path.join(path.dirname(w.state), `${w.name}.log`);
  const fd = fs.openSync(log, 'a');
  const child = spawn(bin, ['witness', 'serve', '--name', w.name, '--key', w.keyFile, '--log', logKey,
    '--state', w.state, '--listen', `127.0.0.1:${w.port}`], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  for (let i = 0; ; i++) {
    try {
      if ((await api(w.url, 'POST', '/add-checkpoint', { body: 'x', timeoutMs: 500 })).status === 400) break;
    } catch { /* not up yet */ }
    if (i > 100) throw new Error(`witness ${w.name} did not start: ${fs.readFileSync(log, 'utf8')}`);
    await sleep(50);
  }
  w.stop = async () => { child.kill('SIGTERM'); return exited; };
  return w;
}

// The latest checkpoint as GET /log/checkpoint serves it, and which witnesses' lines it has.
async function checkpoint(srv, token) {
  const text = (await api(srv.url, 'GET', '/api/v1/log/checkpoint', { token })).text;
  const size = Number(text.split('\n')[1]);
  const names = text.split('\n').filter((l) => l.startsWith('\u2014 w')).map((l) => l.split(' ')[1]);
  return { text, size, names };
}

async function waitFor(what, fn, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

test('two witnesses cosign; one stopped catches up; a fork is refused; verify counts a quorum', { timeout: 180_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-witness-'));
  const a = makeWitness(dir, 'wa.example');
  const b = makeWitness(dir, 'wb.example');
  for (const w of [a, b]) { w.port = await freePort(); w.url = `http://127.0.0.1:${w.port}`; }
  const srv = await startServer({
    env: {
      CAPLEDGER_WITNESSES: `${a.vkey} ${a.url}, ${b.vkey} ${b.url}/`,
      CAPLEDGER_WITNESS_RETRY_MAX_S: '0.5',
      CAPLEDGER_WITNESS_TIMEOUT_S: '2',
    },
  });
  try {
    const admin = { token: mintToken(srv, 'admin') };
    const logKey = (await api(srv.url, 'GET', '/api/v1/log/key', { token: admin.token })).text;
    await startWitness(a, logKey);
    await startWitness(b, logKey);
    const olga = await addOwner(srv, 'olga');
    const review = await createReview(srv.url, olga, []);
    for (let i = 0; i < 2; i++) assert.equal((await postDecision(srv.url, olga, record(olga, review.id))).status, 201);
    const both = (cp) => cp.names.includes('wa.example') && cp.names.includes('wb.example');
    let cp = await waitFor('both cosignatures', async () => { const c = await checkpoint(srv, admin.token); return c.size === 3 && both(c) && c; });

    // B stops; decisions do not wait for it.
    await b.stop();
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const r = await postDecision(srv.url, olga, record(olga, review.id));
      assert.equal(r.status, 201, r.text);
      assert.ok(Date.now() - started < 2000, `a decision waited ${Date.now() - started} ms`);
    }
    cp = await waitFor('A alone on size 6', async () => { const c = await checkpoint(srv, admin.token); return c.size === 6 && c.names.includes('wa.example') && c; });
    assert.ok(!cp.names.includes('wb.example'));
    // B comes back with its state: its cosignatures catch up from the size it cosigned.
    await startWitness(b, logKey);
    cp = await waitFor('B catching up', async () => { const c = await checkpoint(srv, admin.token); return c.size === 6 && both(c) && c; });

    // verify: both witnesses held, quorum 2; a third key nobody runs makes a quorum of 3 fail.
    const auditor = addUser(srv, 'audrey', 'auditor');
    const bundle = (await api(srv.url, 'GET', '/api/v1/audit/bundle', { token: auditor.token })).json;
    let v = verifyBundle(bundle, logKey, ['--witness', a.vkey, '--witness', b.vkey, '--quorum', '2']);
    assert.equal(v.status, 0, v.output);
    assert.match(v.output, /cosigned by at least 2 of the 2 witnesses/);
    assert.match(v.output, /witness wa\.example: cosigned the checkpoint at \d+/);
    const c = makeWitness(dir, 'wc.example');
    v = verifyBundle(bundle, logKey, ['--witness', a.vkey, '--witness', b.vkey, '--witness', c.vkey, '--quorum', '3']);
    assert.equal(v.status, 1, v.output);
    assert.match(v.output, /FAILED: checkpoint: 2 of the 3 witnesses you hold cosigned it, fewer than the quorum of 3/);
    // One witness key given twice is one witness: its cosignature never counts twice.
    v = verifyBundle(bundle, logKey, ['--witness', a.vkey, '--witness', a.vkey, '--quorum', '2']);
    assert.equal(v.status, 2, v.output);
    assert.match(v.output, /NOT verified: --witness 1 and --witness 2 are the same witness key \(wa\.example\)/);
    assert.doesNotMatch(v.output, /^verified/m);
    // A quorum above the witnesses given says why it exits 2.
    v = verifyBundle(bundle, logKey, ['--witness', a.vkey, '--quorum', '3']);
    assert.equal(v.status, 2, v.output);
    assert.match(v.output, /--quorum 3 asks for more cosignatures than the 1 --witness key given/);
    // A cosignature line moved onto another checkpoint does not count.
    const line = cp.text.split('\n').find((l) => l.startsWith('\u2014 wb.example'));
    const other = signWithServerKey(srv.keyFile, bundle.origin, 6, crypto.randomBytes(32));
    v = verifyBundle({ ...bundle, checkpoint: `${other}${line}\n` }, logKey, ['--witness', b.vkey]);
    assert.equal(v.status, 1, v.output);
    // A forged cosignature of a witness the auditor holds rejects the note, even when the
    // other witness held cosigned it and a quorum of 1 would be met (C2SP signed-note).
    const sig = Buffer.from(line.split(' ')[2], 'base64');
    sig[sig.length - 1] ^= 1;
    const forged = cp.text.replace(line, `\u2014 wb.example ${sig.toString('base64')}`);
    v = verifyBundle({ ...bundle, checkpoint: forged }, logKey, ['--witness', a.vkey, '--witness', b.vkey, '--quorum', '1']);
    assert.equal(v.status, 1, v.output);
    assert.match(v.output, /cosignature line of witness wb\.example \(the key you hold\) whose signature does not verify/);
    // A witness the auditor does not hold may carry anything: its line is ignored.
    v = verifyBundle({ ...bundle, checkpoint: forged }, logKey, ['--witness', a.vkey, '--quorum', '1']);
    assert.equal(v.status, 0, v.output);

    // A fork shown to B: another root for the size it cosigned, signed with the log's key.
    const fork = signWithServerKey(srv.keyFile, bundle.origin, 6, crypto.randomBytes(32));
    let r = await api(b.url, 'POST', '/add-checkpoint', { body: `old 6\n\n${fork}` });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.headers['content-type'], 'text/x.tlog.size');
    assert.equal(r.text, '6\n');
    // B logs the refused checkpoint itself as evidence (a signed note is public data).
    const bLog = () => fs.readFileSync(path.join(dir, 'wb.example.log'), 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.ok(bLog().some((l) => l.msg === 'refused a checkpoint' && l.status === 409 && l.checkpoint === fork), bLog().map((l) => JSON.stringify(l)).join('\n'));
    // A longer tree that does not extend it: the proof does not verify.
    const longer = signWithServerKey(srv.keyFile, bundle.origin, 7, crypto.randomBytes(32));
    r = await api(b.url, 'POST', '/add-checkpoint', { body: `old 6\n${crypto.randomBytes(32).toString('base64')}\n${crypto.randomBytes(32).toString('base64')}\n\n${longer}` });
    assert.equal(r.status, 422, r.text);
    // Another size than the one it cosigned; an unknown log; a checkpoint by another key.
    r = await api(b.url, 'POST', '/add-checkpoint', { body: `old 2\n\n${longer}` });
    assert.equal(r.status, 409, r.text);
    assert.equal((await api(b.url, 'POST', '/add-checkpoint', { body: 'old 0\n\nelsewhere.example\n1\nAAAA\n\n\u2014 elsewhere.example AAAA\n' })).status, 404);
    const stranger = path.join(dir, 'stranger.key');
    fs.writeFileSync(stranger, `${crypto.randomBytes(32).toString('hex')}\n`);
    r = await api(b.url, 'POST', '/add-checkpoint', { body: `old 6\n\n${signWithServerKey(stranger, bundle.origin, 7, crypto.randomBytes(32))}` });
    assert.equal(r.status, 403, r.text);
    // B's state survived the fork: the real log goes on being cosigned by both.
    assert.equal((await postDecision(srv.url, olga, record(olga, review.id))).status, 201);
    await waitFor('both on size 7', async () => { const x = await checkpoint(srv, admin.token); return x.size === 7 && both(x); });
  } finally {
    // Stopped however the test ended: a witness left running keeps node (and ctest) waiting.
    for (const w of [a, b]) if (w.stop) await w.stop();
    await srv.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a witness that refuses the log (409 with a larger size, or 422) raises a log_integrity alert', { timeout: 120_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-witness-'));
  // Two witnesses with real keys, answered by a stand-in that has seen another history: one
  // says it cosigned a larger tree (409), the other that the proof does not verify (422).
  const ahead = makeWitness(dir, 'ahead.example');
  const forked = makeWitness(dir, 'forked.example');
  const http = await import('node:http');
  const servers = [];
  for (const [w, status, body] of [[ahead, 409, '18446744073709551615\n'], [forked, 422, 'consistency proof does not verify\n']]) {
    w.port = await freePort();
    w.url = `http://127.0.0.1:${w.port}`;
    w.seen = [];
    const s = http.createServer((req, res) => {
      let text = '';
      req.on('data', (d) => { text += d; });
      req.on('end', () => {
        w.seen.push(text);
        res.writeHead(status, { 'content-type': status === 409 ? 'text/x.tlog.size' : 'text/plain' });
        res.end(body);
      });
    });
    await new Promise((r) => s.listen(w.port, '127.0.0.1', r));
    servers.push(s);
  }
  const srv = await startServer({
    env: {
      CAPLEDGER_WITNESSES: `${ahead.vkey} ${ahead.url}, ${forked.vkey} ${forked.url}`,
      CAPLEDGER_WITNESS_RETRY_MAX_S: '0.5',
      CAPLEDGER_WITNESS_TIMEOUT_S: '2',
    },
  });
  try {
    const admin = { token: mintToken(srv, 'admin') };
    const olga = await addOwner(srv, 'olga');
    const review = await createReview(srv.url, olga, []);
    assert.equal((await postDecision(srv.url, olga, record(olga, review.id))).status, 201);
    const alerts = await waitFor('two log_integrity alerts for the admin', async () => {
      const a = (await api(srv.url, 'GET', '/api/v1/alerts', { token: admin.token })).json.items.filter((x) => x.kind === 'log_integrity' && x.owner === 'admin');
      return a.length >= 2 && a;
    });
    assert.ok(alerts.some((a) => /Witness ahead\.example refused checkpoint \d+ of localhost\/capledger: it answered 409, having cosigned size 18446744073709551615: it saw a different history of this log/.test(a.message)), JSON.stringify(alerts));
    assert.ok(alerts.some((a) => /Witness forked\.example refused checkpoint \d+ of localhost\/capledger: it answered 422/.test(a.message)), JSON.stringify(alerts));
    const mine = (await api(srv.url, 'GET', '/api/v1/alerts', { token: olga.token })).json.items.filter((x) => x.kind === 'log_integrity');
    assert.ok(mine.length >= 2);
    // Retrying the same refusal does not alert again.
    await sleep(1500);
    const later = (await api(srv.url, 'GET', '/api/v1/alerts', { token: admin.token })).json.items.filter((x) => x.kind === 'log_integrity' && x.owner === 'admin');
    const sizes = new Set(later.map((a) => a.message.match(/checkpoint (\d+)/)[1]));
    assert.equal(later.length, 2 * sizes.size, JSON.stringify(later));
    assert.ok(srv.stderrLines().some((l) => l.includes('"a witness refused the log\'s checkpoint"')));
  } finally {
    await srv.stop();
    for (const s of servers) s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
