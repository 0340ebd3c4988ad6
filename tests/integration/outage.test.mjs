// The database goes away and comes back: /readyz and API calls answer 503 quickly while it is
// down, nothing crashes, and service resumes by itself. Runs alone (RUN_SERIAL in CMake): it
// stops the shared throwaway cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, pgStart, pgStop, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';

test('database restart: 503 quickly while down, recovers without a restart of capledger', async () => {
  const srv = await startServer();
  const admin = mintToken(srv, 'admin');
  try {
    assert.equal((await api(srv.url, 'GET', '/api/v1/teams', { token: admin })).status, 200);
    pgStop();
    try {
      for (const p of ['/readyz', '/api/v1/teams']) {
        const t0 = Date.now();
        const r = await api(srv.url, 'GET', p, { token: admin });
        const ms = Date.now() - t0;
        assert.equal(r.status, 503, `${p}: ${r.text}`);
        assert.match(r.headers['content-type'], /problem\+json/);
        assert.ok(ms < 3000, `${p} took ${ms} ms while the database was down`);
      }
      assert.equal((await api(srv.url, 'GET', '/healthz')).status, 200, 'liveness does not depend on the database');
    } finally {
      pgStart();
    }
    let ready = 0;
    for (let i = 0; i < 50 && ready !== 200; i++) {
      ready = (await api(srv.url, 'GET', '/readyz')).status;
      if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(ready, 200);
    const after = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'after-outage' } });
    assert.equal(after.status, 201, after.text);
    assert.equal(srv.exited, null, 'the server kept running');
  } finally {
    await srv.stop();
  }
});
