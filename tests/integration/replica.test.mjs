// CAPLEDGER_READ_DATABASE_URL: reports and read-only GETs may read from the read database; a
// read database that cannot be reached sends them to the primary (never a 5xx), and /metrics
// says so. (tests/scale runs a real hot standby, lag and replay waits included.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer, withDatabase } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';

test('an unreachable read database sends reads to the primary; a reachable one answers them', async () => {
  const missing = withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, 'no_such_replica_db');
  const srv = await startServer({ env: { CAPLEDGER_READ_DATABASE_URL: missing } });
  try {
    const admin = mintToken(srv, 'admin');
    assert.equal((await api(srv.url, 'GET', '/api/v1/teams', { token: admin })).status, 200);
    const report = await api(srv.url, 'GET', '/api/v1/reports/usage?group_by=team', { token: admin });
    assert.equal(report.status, 200, report.text);
    const made = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'readers' } });
    assert.equal(made.status, 201, made.text);
    assert.equal((await api(srv.url, 'GET', `/api/v1/teams/${made.json.id}`, { token: admin })).status, 200);
    const metrics = (await api(srv.url, 'GET', '/metrics')).text;
    assert.match(metrics, /^capledger_db_replica_up 0$/m);
    assert.doesNotMatch(metrics, /^capledger_db_replica_lag_bytes/m);
    // Three eligible reads, all from the primary: the read database is down.
    const count = (target, reason) => Number(new RegExp(`capledger_db_reads_total\\{target="${target}",reason="${reason}"\\} (\\d+)`).exec(metrics)?.[1]);
    assert.equal(count('replica', 'caught_up'), 0, metrics);
    assert.equal(count('primary', 'replica_down'), 3, metrics);
    assert.doesNotMatch(metrics, /write_in_flight/, 'no reason is left that never counts');
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
      // Not a standby (not in recovery): it has everything the primary has, so it answers.
      const metrics = (await api(again.url, 'GET', '/metrics')).text;
      assert.match(metrics, /^capledger_db_replica_up 1$/m);
      assert.match(metrics, /^capledger_db_replica_in_recovery 0$/m);
      assert.match(metrics, /^capledger_db_replica_lag_bytes 0$/m);
      assert.match(metrics, /capledger_db_reads_total\{target="replica",reason="caught_up"\} [1-9]/);
    } finally {
      await again.stop();
    }
  } finally {
    await ok.stop();
  }
});
