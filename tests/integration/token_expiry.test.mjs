// API tokens may be given an expiry (API and CLI); an expired token answers 401 like a revoked one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, psql, startServer } from './lib/harness.mjs';
import { cli, mintToken } from './lib/cli.mjs';

test('tokens with an expiry work until it passes, then answer 401', async () => {
  const srv = await startServer();
  try {
    const admin = mintToken(srv, 'admin');
    const made = await api(srv.url, 'POST', '/api/v1/tokens', { token: admin, body: { label: 'ci', expires_in_days: 30 } });
    assert.equal(made.status, 201, made.text);
    const days = (Date.parse(made.json.expires_at) - Date.now()) / 86400e3;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
    const ci = made.json.token;
    assert.equal((await api(srv.url, 'GET', '/api/v1/me', { token: ci })).status, 200);
    psql(`UPDATE api_token SET expires_at = now() - interval '1 second' WHERE id = '${made.json.id}'`, { database: srv.db });
    // Expired behind the server's back: the instance may reuse its resolution for at most
    // CAPLEDGER_TOKEN_CACHE_MS (1 s, docs/auth.md); a request sent after that answers 401.
    await new Promise((r) => setTimeout(r, 1000));
    const expired = await api(srv.url, 'GET', '/api/v1/me', { token: ci });
    assert.equal(expired.status, 401);
    for (const bad of [0, -1, 3651, 1.5, '7']) {
      const r = await api(srv.url, 'POST', '/api/v1/tokens', { token: admin, body: { expires_in_days: bad } });
      assert.equal(r.status, 422, `${bad}: ${r.text}`);
      assert.equal(r.json.errors[0].pointer, '/expires_in_days');
    }
    const listed = await api(srv.url, 'GET', '/api/v1/tokens', { token: admin });
    assert.ok(listed.json.items.some((t) => t.id === made.json.id && t.expires_at));
    // The CLI: --expires-in-days N; a bad N is a usage error.
    const out = cli(srv, ['token', 'create', 'admin', '--expires-in-days', '2']);
    assert.equal(out.status, 0, out.stderr);
    assert.equal((await api(srv.url, 'GET', '/api/v1/me', { token: out.stdout.trim() })).status, 200);
    assert.equal(cli(srv, ['token', 'create', 'admin', '--expires-in-days', '0']).status, 2);
  } finally {
    await srv.stop();
  }
});
