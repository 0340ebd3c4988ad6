// Hardening (issue 9): a NUL in the path, and Transfer-Encoding on an HTTP/1.0 request.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';
import { rawExchange } from './lib/raw.mjs';

let srv;
before(async () => { srv = await startServer(); });
after(async () => { await srv?.stop(); });

const alive = async () => {
  assert.equal(srv.exited, null, 'the server process is still running');
  const h = await api(srv.url, 'GET', '/healthz', { timeoutMs: 2_000 });
  assert.equal(h.status, 200);
};

const statusOf = (text) => Number((text.match(/^HTTP\/1\.[01] (\d{3}) /) || [])[1]);

describe('NUL in the request target', () => {
  for (const target of ['/favicon.svg%00.html', '/app.css%00.js', '/index.html%00', '/%00', '/api/v1/me%00',
                        '/healthz%00x', '/favicon.svg?x=%00', '/api/v1/runs?cluster=a%00b']) {
    test(`GET ${target} is 400 problem+json`, async () => {
      const r = await rawExchange(srv.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.equal(statusOf(r.text), 400, r.text.slice(0, 300));
      assert.match(r.text, /\r\nContent-Type: application\/problem\+json/i);
      assert.match(r.text, /"type":"https:\/\/capledger.dev\/problems\/bad-uri"/);
    });
  }

  test('the files themselves are still served', async () => {
    for (const p of ['/favicon.svg', '/app.css', '/favicon%2esvg', '/app%2Ecss']) { // still decoded
      const r = await api(srv.url, 'GET', p);
      assert.equal(r.status, 200, p);
    }
    await alive();
  });
});

describe('Transfer-Encoding on HTTP/1.0', () => {
  const hidden = 'GET /api/v1/me HTTP/1.1\r\nHost: x\r\n\r\n';
  test('an HTTP/1.0 request with Transfer-Encoding: chunked is 400 bad-framing and closed', async () => {
    const body = '{"username":"olga"}';
    const r = await rawExchange(srv.url, `POST /api/v1/session HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n${hidden}`);
    assert.equal(statusOf(r.text), 400, r.text.slice(0, 300));
    assert.match(r.text, /"type":"https:\/\/capledger.dev\/problems\/bad-framing"/);
    assert.equal(r.closed, true, 'the connection stayed open');
    assert.equal((r.text.match(/HTTP\/1\.[01] \d{3} /g) || []).length, 1, `more than one reply: ${r.text}`);
    await alive();
  });

  test('a GET over HTTP/1.0 with Transfer-Encoding is refused too', async () => {
    const r = await rawExchange(srv.url, `GET /healthz HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${hidden}`);
    assert.equal(statusOf(r.text), 400, r.text.slice(0, 300));
    assert.equal(r.closed, true);
  });

  test('HTTP/1.0 with Content-Length, and HTTP/1.1 chunked, still work', async () => {
    const body = '{"username":"olga"}';
    const a = await rawExchange(srv.url, `POST /api/v1/session HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    assert.equal(statusOf(a.text), 422, a.text.slice(0, 300));
    const b = await rawExchange(srv.url, `POST /api/v1/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    assert.equal(statusOf(b.text), 422, b.text.slice(0, 300));
  });
});
