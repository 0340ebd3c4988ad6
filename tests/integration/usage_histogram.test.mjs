// The usage report's queue-wait percentiles past CAPLEDGER_USAGE_EXACT_MAX waits come from the
// histogram the uploads keep (db/migrations/0062, core/qwhist.h): this server is started with
// the threshold lowered to 100 waits so 3,000 uploaded jobs take that path. Each approximate
// percentile must be within its stated relative error of percentile_cont over the exact waits,
// computed here from the uploaded text; a selection of at most 100 waits stays exact; a
// re-upload adds nothing to the histogram; retention drops the months it drops from it too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { psql } from './lib/harness.mjs';
import { evidenceServer, text } from './evidence.lib.mjs';

let srv, as;
before(async () => { ({ srv, as } = await evidenceServer({ env: { CAPLEDGER_USAGE_EXACT_MAX: '100' } })); });
after(async () => { await srv?.stop(); });

const sql = (q) => psql(q, { database: srv.db });
const HEADER = 'JobID|JobIDRaw|User|Account|Partition|State|Submit|Start|End|ExitCode|AllocTRES';
const iso = (ms) => new Date(ms).toISOString().slice(0, 19);
const sacct = (jobs) => [HEADER, ...jobs.map((j) => [j.id, j.id, 'u1', j.team, j.partition, j.state,
  iso(j.submit), j.start === null ? 'Unknown' : iso(j.start), iso(j.end), j.state === 'COMPLETED' ? '0:0' : '1:0',
  j.gpus ? `cpu=8,gres/gpu=${j.gpus},mem=64G` : 'cpu=4,mem=16G'].join('|'))].join('\n') + '\n';
function percentile(sorted, p) { // percentile_cont
  const x = p * (sorted.length - 1);
  const lo = Math.floor(x);
  return sorted[lo] + (sorted[Math.ceil(x)] - sorted[lo]) * (x - lo);
}

let seed = 4242;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const states = ['COMPLETED', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'];
const t0 = Date.UTC(2025, 0, 10, 3, 7, 11);
const jobs = [];
for (let i = 0; i < 3000; i++) {
  const submit = t0 + Math.floor(i * 160 * 86400 / 3000) * 1000; // 160 days: six months
  const wait = rnd() < 0.1 ? 0 : Math.floor(Math.exp(rnd() * 12)) * 1000;
  const start = rnd() < 0.04 ? null : submit + wait;
  jobs.push({ id: `h${i}`, team: rnd() < 0.5 ? 'vision' : 'nlp', partition: rnd() < 0.5 ? 'h100' : 'a100',
    state: states[Math.floor(rnd() * states.length)], submit, start,
    end: (start ?? submit) + Math.floor(rnd() * 9000) * 1000, gpus: [0, 1, 2, 8][Math.floor(rnd() * 4)] });
}
const waited = (j) => j.gpus > 0 && j.start !== null;

test('uploads keep the histogram: one count per stored GPU run that started, none for a duplicate', async () => {
  const put = await as('owner1', 'PUT', '/clusters/hist', { body: { default_class: 'exploratory', partitions: [
  { partition: 'h100', workload_class: 'production' }, { partition: 'a100', workload_class: 'exploratory' }] } });
  assert.ok(put.status === 200 || put.status === 201, put.text);
  for (const part of [jobs.slice(0, 1700), jobs.slice(1700), jobs.slice(0, 1700)]) {
    const up = await as('owner1', 'POST', '/runs?cluster=hist', text(sacct(part)));
    assert.equal(up.status, 201, up.text);
  }
  assert.equal(Number(sql('SELECT sum(n) FROM run_qw_hist')), jobs.filter(waited).length);
  assert.equal(Number(sql('SELECT sum(n) FROM run_qw_hist_all')), jobs.filter(waited).length);
  assert.equal(Number(sql("SELECT count(*) FROM run_qw_hist WHERE bucket = -2000")) > 0, true);
  // the bucket the upload wrote is the one core/qwhist.h gives: upper bound G^k with G = 1.01/0.99
  const bad = sql(`SELECT count(*) FROM run r JOIN LATERAL (SELECT extract(epoch FROM r.started_at - r.submitted_at)::float8 AS v) w ON true
    WHERE r.gpus > 0 AND r.started_at IS NOT NULL AND w.v > 0 AND NOT (w.v <= power(1.01 / 0.99, capledger_qw_bucket(w.v)) * (1 + 1e-12)
    AND w.v > power(1.01 / 0.99, capledger_qw_bucket(w.v) - 1) * (1 - 1e-12))`);
  assert.equal(Number(bad), 0);
  // a rebuild from run gives the same histograms
  const dump = (t) => sql(`SELECT md5(string_agg(x, ';' ORDER BY x)) FROM (SELECT concat_ws(',', ${t === 'run_qw_hist' ? 'month, ' : ''}team, workload_class, cluster, state, bucket, n) AS x FROM ${t}) s`);
  const before = [dump('run_qw_hist'), dump('run_qw_hist_all')];
  sql('SELECT capledger_usage_rollup_rebuild()');
  assert.deepEqual([dump('run_qw_hist'), dump('run_qw_hist_all')], before);
  sql('SELECT capledger_partitions_maintain(3, 0)'); // the months leave the default partition
});

const iso8601 = (ms) => new Date(ms).toISOString();
const cases = [
  ['all runs by team and state', 'group_by=team,state', () => true],
  ['all runs, one group', '', () => true],
  ['months and partial months at both edges', `group_by=team&from=${iso8601(Date.UTC(2025, 1, 14, 8, 30))}&to=${iso8601(Date.UTC(2025, 4, 3, 17))}`,
    (j) => j.submit >= Date.UTC(2025, 1, 14, 8, 30) && j.submit < Date.UTC(2025, 4, 3, 17)],
  ['within one month (read from run only)', `group_by=workload_class&from=${iso8601(Date.UTC(2025, 2, 2))}&to=${iso8601(Date.UTC(2025, 2, 28, 12))}`,
    (j) => j.submit >= Date.UTC(2025, 2, 2) && j.submit < Date.UTC(2025, 2, 28, 12)],
];
const klass = { h100: 'production', a100: 'exploratory' };
const keyOf = { '': () => '', 'group_by=team,state': (j) => `${j.team}/${j.state}`, team: (j) => j.team, workload_class: (j) => klass[j.partition] };
const groupKey = (g) => [g.team, g.state].filter((x) => x !== undefined).join('/') || g.workload_class || '';

for (const [what, query, pick] of cases) {
  test(`approximate percentiles within the stated error: ${what}`, async () => {
    const r = await as('owner1', 'GET', `/reports/usage?${query}`);
    assert.equal(r.status, 200, r.text);
    const dim = query.startsWith('group_by=team,state') ? query.split('&')[0] : (query.match(/group_by=(\w+)/)?.[1] ?? '');
    const want = {};
    for (const j of jobs.filter(pick).filter(waited)) (want[keyOf[dim](j)] ??= []).push((j.start - j.submit) / 1000);
    const groups = r.json.groups.filter((g) => g.queue_wait_s.p50 !== null);
    assert.deepEqual(groups.map(groupKey).sort(), Object.keys(want).sort(), what);
    let approximated = 0;
    for (const g of groups) {
      const waits = want[groupKey(g)].sort((a, b) => a - b);
      const q = g.queue_wait_s;
      const mean = waits.reduce((s, x) => s + x, 0) / waits.length;
      assert.ok(Math.abs(q.mean - mean) <= 1e-9 * Math.max(1, mean), `${what} ${groupKey(g)} mean ${q.mean} vs ${mean}`);
      assert.equal(q.approximate, true, `${what}: ${JSON.stringify(q)}`); // the whole selection holds > 100 waits
      assert.equal(q.relative_error, 0.01);
      for (const [k, p] of [['p50', 0.5], ['p90', 0.9], ['p99', 0.99]]) {
        const exact = percentile(waits, p);
        assert.ok(Math.abs(q[k] - exact) <= q.relative_error * exact + 1e-9, `${what} ${groupKey(g)} ${k}: ${q[k]} vs exact ${exact}`);
      }
      approximated++;
    }
    assert.ok(approximated > 0);
  });
}

test('a selection of at most CAPLEDGER_USAGE_EXACT_MAX waits stays exact', async () => {
  const from = Date.UTC(2025, 2, 5);
  const to = Date.UTC(2025, 2, 9);
  const r = await as('owner1', 'GET', `/reports/usage?from=${iso8601(from)}&to=${iso8601(to)}`);
  assert.equal(r.status, 200, r.text);
  const waits = jobs.filter((j) => waited(j) && j.submit >= from && j.submit < to).map((j) => (j.start - j.submit) / 1000).sort((a, b) => a - b);
  assert.ok(waits.length > 10 && waits.length <= 100, `${waits.length}`);
  const q = r.json.groups[0].queue_wait_s;
  assert.equal(q.approximate, false);
  assert.equal(q.relative_error, 0);
  for (const [k, p] of [['p50', 0.5], ['p90', 0.9], ['p99', 0.99]]) assert.ok(Math.abs(q[k] - percentile(waits, p)) <= 1e-9 * percentile(waits, p), `${k}: ${q[k]}`);
});

test('retention drops the histogram rows of the months it drops', () => {
  const months = Number(sql("SELECT count(DISTINCT month) FROM run_qw_hist"));
  assert.ok(months >= 6, `${months}`);
  sql('SELECT capledger_partitions_maintain(3, 12)'); // 2025's months ended over 12 months ago
  const cutoff = sql("SELECT (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '12 months') AT TIME ZONE 'UTC'").trim();
  assert.equal(Number(sql(`SELECT count(*) FROM run_qw_hist WHERE month < '${cutoff}'`)), 0);
  const left = Number(sql('SELECT count(*) FROM run WHERE gpus > 0 AND started_at IS NOT NULL'));
  assert.ok(left < jobs.filter(waited).length);
  assert.equal(Number(sql('SELECT coalesce(sum(n), 0) FROM run_qw_hist')), left);
  assert.equal(Number(sql('SELECT coalesce(sum(n), 0) FROM run_qw_hist_all')), left); // the dropped months taken off
  assert.equal(Number(sql('SELECT count(*) FROM run_qw_hist_all WHERE n <= 0')), 0);
  // and the uploads' rollup (the checklist's runs and their uploads) with them
  assert.equal(Number(sql(`SELECT count(*) FROM run_usage_upload WHERE month < '${cutoff}'`)), 0);
  assert.equal(Number(sql('SELECT coalesce(sum(qw_n), 0) FROM run_usage_upload')), left);
});
