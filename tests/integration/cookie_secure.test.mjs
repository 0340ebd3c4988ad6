// The session cookie carries Secure whenever browsers reach the server over https (issue 25,
// item 8): behind a TLS proxy the hop to capledger is plain HTTP, so the request alone does not
// say so; CAPLEDGER_PUBLIC_ORIGIN=https://… does. Without it (plain HTTP), no Secure: a browser
// would drop the cookie.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';

const ORIGIN = 'https://capledger.example:8443';
const cookieOf = (res) => [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('capledger_session='));

for (const [what, env, secure] of [
  ['behind a TLS proxy (CAPLEDGER_PUBLIC_ORIGIN https)', { CAPLEDGER_PUBLIC_ORIGIN: ORIGIN }, true],
  ['plain HTTP, no public origin', {}, false],
  ['a public origin that is http', { CAPLEDGER_PUBLIC_ORIGIN: 'http://capledger.example:8080' }, false],
]) {
  test(`session cookie ${secure ? 'has' : 'has no'} Secure: ${what}`, async () => {
    const srv = await startServer({ env });
    try {
      const r = await api(srv.url, 'POST', '/api/v1/session', { body: { username: 'admin', password: srv.adminPassword } });
      assert.equal(r.status, 201, r.text);
      const set = cookieOf(r);
      assert.ok(set, 'a session cookie is set');
      assert.equal(/;\s*Secure(;|$)/i.test(set), secure, set);
      assert.match(set, /HttpOnly/);
      // signing out clears it with the same attributes (a Secure cookie is only replaced by one)
      const id = set.split(';')[0];
      const origin = env.CAPLEDGER_PUBLIC_ORIGIN || srv.url;
      const out = await api(srv.url, 'DELETE', '/api/v1/session', { cookie: id, headers: { 'X-CSRF-Token': r.json.csrf_token, Origin: origin } });
      assert.ok(out.status === 204 || out.status === 200, out.text);
      const cleared = cookieOf(out);
      assert.ok(cleared, out.text);
      assert.equal(/;\s*Secure(;|$)/i.test(cleared), secure, cleared);
    } finally {
      await srv.stop();
    }
  });
}
