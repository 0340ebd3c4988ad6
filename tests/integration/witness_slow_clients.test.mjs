// `capledger witness serve` under slow clients (issue 25, item 7): with 4 worker threads and no
// header deadline, 8 connections trickling their headers stalled it (valid requests took 9-15 s
// or timed out, so no cosignatures were collected). Sized like the main server now: valid
// requests are answered in under a second while 8 — and then 40, from five addresses — slow
// clients hold connections, and a connection that never finishes its headers is closed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { api, freePort } from './lib/harness.mjs';
import { bin } from './lib/cli.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let dir, child, url, port, logFile;
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-wslow-'));
  const key = (name) => {
    const keyFile = path.join(dir, `${name}.key`);
    assert.equal(spawnSync(bin, ['keygen', keyFile]).status, 0);
    const r = spawnSync(bin, ['witness', 'key', '--name', name, '--key', keyFile], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return { keyFile, vkey: r.stdout.trim() };
  };
  const w = key('w.example');
  // A log's note verifier key (signed-note, Ed25519): name+keyhash+base64(0x01 ‖ public key).
  const pk = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const typed = Buffer.concat([Buffer.from([1]), pk]);
  const hash = crypto.createHash('sha256').update(Buffer.concat([Buffer.from('log.example\n'), typed])).digest().subarray(0, 4).toString('hex');
  const log = { vkey: `log.example+${hash}+${typed.toString('base64')}` };
  port = await freePort();
  url = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, 'witness.log');
  const fd = fs.openSync(logFile, 'a');
  child = spawn(bin, ['witness', 'serve', '--name', 'w.example', '--key', w.keyFile, '--log', log.vkey,
    '--state', path.join(dir, 'state'), '--listen', `127.0.0.1:${port}`], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  for (let i = 0; ; i++) {
    try {
      if ((await api(url, 'POST', '/add-checkpoint', { body: 'x', timeoutMs: 500 })).status === 400) break;
    } catch { /* not up yet */ }
    if (i > 100) throw new Error(`the witness did not start: ${fs.readFileSync(logFile, 'utf8')}`);
    await sleep(50);
  }
});
after(async () => {
  child?.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

// A client that sends a request line and then one header byte every 500 ms, never finishing.
function slowClient(localAddress) {
  const s = net.connect({ host: '127.0.0.1', port, localAddress });
  const state = { closed: false, socket: s };
  s.on('error', () => {});
  s.on('close', () => { state.closed = true; });
  s.on('connect', () => {
    s.write('POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nX-Slow: ');
    const t = setInterval(() => { if (state.closed) clearInterval(t); else s.write('a'); }, 500);
    state.timer = t;
  });
  return state;
}

async function timedValid(n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = Date.now();
    const r = await api(url, 'POST', '/add-checkpoint', { body: 'not a checkpoint', timeoutMs: 20_000 });
    times.push(Date.now() - t0);
    assert.equal(r.status, 400, r.text);
  }
  return times;
}

test('8 slow-header connections: valid requests are still answered in under a second', async () => {
  const slow = Array.from({ length: 8 }, () => slowClient('127.0.0.9'));
  await sleep(1500);
  try {
    const times = await timedValid(10);
    console.log(`# 8 slow clients: valid requests answered in ${Math.max(...times)} ms at most`);
    assert.ok(times.every((t) => t < 1000), JSON.stringify(times));
  } finally {
    for (const s of slow) { clearInterval(s.timer); s.socket.destroy(); }
  }
});

test('40 slow clients from five addresses: valid requests still answered; slow ones are closed within the header deadline', async () => {
  const slow = [];
  for (let a = 0; a < 5; a++) for (let i = 0; i < 8; i++) slow.push(slowClient(`127.0.0.${20 + a}`));
  await sleep(1500);
  try {
    const times = await timedValid(10);
    console.log(`# 40 slow clients: valid requests answered in ${Math.max(...times)} ms at most`);
    assert.ok(times.every((t) => t < 1000), JSON.stringify(times));
    // The header deadline (5 s) ends them all.
    const deadline = Date.now() + 12_000;
    while (slow.some((s) => !s.closed) && Date.now() < deadline) await sleep(200);
    assert.equal(slow.filter((s) => !s.closed).length, 0, 'slow clients still connected after the header deadline');
  } finally {
    for (const s of slow) { clearInterval(s.timer); s.socket.destroy(); }
  }
});
