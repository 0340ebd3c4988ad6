// Expect: 100-continue (RFC 9110 §10.1.1): a client that asks waits for an interim 100 before it
// sends the body — curl does for every large upload, and waited a whole second before each one
// because the server never answered (issue 13's ingest figures). The 100 must come at once, for
// a streamed upload (POST /runs) and a JSON body alike, and the request must then succeed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { evidenceServer } from './evidence.lib.mjs';

let srv, tokens;
before(async () => { ({ srv, tokens } = await evidenceServer()); });
after(async () => { await srv?.stop(); });

// Sends the head, waits for "HTTP/1.1 100" (at most waitMs), then the body; resolves to
// {continueMs, reply} where continueMs is null when no interim 100 came in time.
function withExpect(url, head, body, waitMs = 800) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: hostname, port: Number(port) });
    let buf = '', sentAt = 0, continueMs = null, bodySent = false;
    const sendBody = () => { if (!bodySent) { bodySent = true; sock.write(body); } };
    let timer;
    sock.on('connect', () => {
      sentAt = Date.now();
      sock.write(head);
      timer = setTimeout(sendBody, waitMs); // as curl does: send anyway after a while
    });
    sock.on('data', (c) => {
      buf += c.toString('latin1');
      if (continueMs === null && !bodySent && /^HTTP\/1\.1 100 /.test(buf)) {
        continueMs = Date.now() - sentAt;
        clearTimeout(timer);
        sendBody();
      }
    });
    sock.on('end', () => resolve({ continueMs, reply: buf }));
    sock.on('error', reject);
  });
}

const finalStatus = (text) => Number((text.replace(/^HTTP\/1\.1 100 [^\r]*\r\n\r\n/, '').match(/^HTTP\/1\.1 (\d{3}) /) || [])[1]);

test('a streamed upload gets its 100 Continue at once, then is stored', async () => {
  const sacct = 'JobID|User|Account|Partition|State|Submit|Start|End|ExitCode|AllocTRES\n' +
    '41|ana|vision|gpu|COMPLETED|2025-03-01T10:00:00|2025-03-01T10:01:00|2025-03-01T11:01:00|0:0|gres/gpu=1\n';
  const head = `POST /api/v1/runs?cluster=expect&team=vision HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.ana}\r\n` +
    `Content-Type: text/csv\r\nContent-Length: ${Buffer.byteLength(sacct)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`;
  const r = await withExpect(srv.url, head, sacct);
  assert.notEqual(r.continueMs, null, `no interim 100 within 800 ms: ${r.reply.slice(0, 200)}`);
  assert.ok(r.continueMs < 500, `the 100 took ${r.continueMs} ms`);
  assert.equal(finalStatus(r.reply), 201, r.reply.slice(0, 600));
});

test('a JSON body gets its 100 Continue at once too', async () => {
  const body = JSON.stringify({ team: 'vision', name: 'expect', kind: 'training', class: 'production' });
  const head = `POST /api/v1/workloads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.ana}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`;
  const r = await withExpect(srv.url, head, body);
  assert.notEqual(r.continueMs, null, `no interim 100 within 800 ms: ${r.reply.slice(0, 200)}`);
  assert.equal(finalStatus(r.reply), 201, r.reply.slice(0, 600));
});

test('a request refused before its body is read gets no 100, only the refusal', async () => {
  const head = 'POST /api/v1/workloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Content-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n';
  const r = await withExpect(srv.url, head, '{}');
  assert.equal(r.continueMs, null, 'an anonymous request was invited to send its body');
  assert.equal(finalStatus(r.reply), 401, r.reply.slice(0, 300));
});
