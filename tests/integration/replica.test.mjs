// CAPLEDGER_READ_DATABASE_URL: the reports read from the replica connection, everything else
// from the primary. A replica that cannot be reached fails the reports (503) and nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer, withDatabase } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';

test('reports use the read replica; the rest of the API does not', async () => {
  const missing = withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, 'no_such_replica_db');
  const srv = await startServer({ env: { CAPLEDGER_READ_DATABASE_URL: missing } });
  try {
    const admin = mintToken(srv, 'admin');
    assert.equal((await api(srv.url, 'GET', '/api/v1/teams', { token: admin })).status, 200);
    const report = await api(srv.url, 'GET', '/api/v1/reports/usage?group_by=team', { token: admin });
    assert.equal(report.status, 503, report.text);
    assert.match(report.headers['content-type'], /problem\+json/);
  } finally {
    await srv.stop();
  }
  // The same server pointed at a reachable replica (here the primary itself) answers.
  const ok = await startServer();
  try {
    const admin = mintToken(ok, 'admin');
    const again = await startServer({ env: { CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, ok.db),
      CAPLEDGER_READ_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, ok.db),
      CAPLEDGER_KEY_FILE: ok.keyFile } });
    try {
      const r = await api(again.url, 'GET', '/api/v1/reports/usage?group_by=team', { token: admin });
      assert.equal(r.status, 200, r.text);
    } finally {
      await again.stop();
    }
  } finally {
    await ok.stop();
  }
});
