// Runs and telemetry samples are partitioned by UTC month (db/migrations/0060): the months
// ahead exist once the server answers, a run of any date is accepted (the default partition
// takes what no month covers, and maintenance moves it into its month), a re-upload still
// counts every row a duplicate whichever partition it is in, retention drops old months only
// when CAPLEDGER_RETENTION_MONTHS says so, and the usage report's figures over runs spread
// across partitions equal a computation done here from the uploaded text.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { psql, startServer, withDatabase } from './lib/harness.mjs';
import { evidenceServer, makeOffer, text } from './evidence.lib.mjs';

let srv, as, h100, a100;
before(async () => {
  ({ srv, as } = await evidenceServer());
  h100 = await makeOffer(as); // 98.32 USD per 8 GPUs
  a100 = await makeOffer(as, { provider: 'lambda', instance_type: 'gpu_8x_a100_80gb_sxm4', gpu_model: 'A100-80GB', price_per_hour: 14.32 });
});
after(async () => { await srv?.stop(); });

const sql = (q, db = srv.db) => psql(q, { database: db });
const monthName = (d) => `${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
const partitionsOf = (table, db) =>
  sql(`SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '${table}'::regclass`, db)
    .trim().split(',');
const whereIs = (cluster, id, db) =>
  sql(`SELECT tableoid::regclass FROM run WHERE cluster = '${cluster}' AND external_id = '${id}'`, db).trim();

const HEADER = 'JobID|JobIDRaw|User|Account|Partition|State|Submit|Start|End|ExitCode|AllocTRES';
const iso = (ms) => new Date(ms).toISOString().slice(0, 19); // sacct prints no zone: UTC
// jobs: [{id, team, partition, state, submit (ms), start (ms or null), end (ms), gpus}]
const sacct = (jobs) => [HEADER, ...jobs.map((j) => [j.id, j.id, 'u1', j.team, j.partition, j.state,
  iso(j.submit), j.start === null ? 'Unknown' : iso(j.start), iso(j.end), j.state === 'COMPLETED' ? '0:0' : '1:0',
  j.gpus ? `cpu=8,gres/gpu=${j.gpus},mem=64G` : 'cpu=4,mem=16G'].join('|'))].join('\n') + '\n';

test('the current month and the next three have partitions, for runs and for samples', () => {
  const now = new Date();
  for (const table of ['run', 'telemetry_sample']) {
    const have = partitionsOf(table);
    assert.ok(have.includes(`${table}_default`), have.join());
    for (let k = 0; k <= 3; k++) {
      const m = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + k, 1));
      assert.ok(have.includes(`${table}_p${monthName(m)}`), `${table} ${monthName(m)}: ${have.join()}`);
    }
  }
});

test('runs far in the past and the future are accepted; a re-upload counts every row a duplicate', async () => {
  const now = Date.now();
  const jobs = [
    { id: 'past1', team: 'vision', partition: 'p', state: 'COMPLETED', submit: Date.UTC(1999, 2, 5, 10), start: Date.UTC(1999, 2, 5, 11), end: Date.UTC(1999, 2, 6), gpus: 2 },
    { id: 'future1', team: 'vision', partition: 'p', state: 'FAILED', submit: Date.UTC(2091, 6, 1), start: Date.UTC(2091, 6, 1, 1), end: Date.UTC(2091, 6, 2), gpus: 1 },
    { id: 'now1', team: 'vision', partition: 'p', state: 'COMPLETED', submit: now - 3600e3, start: now - 3000e3, end: now - 60e3, gpus: 4 },
  ];
  const up = await as('owner1', 'POST', '/runs?cluster=edge', text(sacct(jobs)));
  assert.equal(up.status, 201, up.text);
  assert.equal(up.json.inserted, 3, up.text);
  assert.equal(whereIs('edge', 'past1'), 'run_default');
  assert.equal(whereIs('edge', 'future1'), 'run_default');
  assert.equal(whereIs('edge', 'now1'), `run_p${monthName(new Date(now - 3600e3))}`);

  // the hourly maintenance moves 1999-03 into a partition of its own; 2091 is beyond the
  // months made ahead and stays in the default
  sql('SELECT capledger_partitions_maintain(3, 0)');
  assert.equal(whereIs('edge', 'past1'), 'run_p1999_03');
  assert.equal(whereIs('edge', 'future1'), 'run_default');
  const listed = await as('owner1', 'GET', '/runs?cluster=edge');
  assert.deepEqual(listed.json.items.map((r) => r.external_id), ['past1', 'future1', 'now1']);

  // the same file again: nothing stored twice, in whichever partition the first copy lives
  const again = await as('owner1', 'POST', '/runs?cluster=edge', text(sacct(jobs)));
  assert.equal(again.status, 201, again.text);
  assert.equal(again.json.inserted, 0, again.text);
  assert.equal(again.json.duplicates, 3, again.text);
  // a requeued job (same id, another submit time, so another partition) is still the same run
  const requeued = [{ ...jobs[0], submit: Date.UTC(2001, 0, 1), start: Date.UTC(2001, 0, 1, 1), end: Date.UTC(2001, 0, 2) }];
  const re = await as('owner1', 'POST', '/runs?cluster=edge', text(sacct(requeued)));
  assert.equal(re.json.inserted, 0, re.text);
  assert.equal(re.json.duplicates, 1, re.text);
  // and twice within one upload: the first line is stored
  const twice = [{ ...jobs[2], id: 'dup1' }, { ...jobs[2], id: 'dup1', state: 'FAILED' }];
  const tw = await as('owner1', 'POST', '/runs?cluster=edge', text(sacct(twice)));
  assert.equal(tw.json.inserted, 1, tw.text);
  assert.equal(tw.json.duplicates, 1, tw.text);
  assert.equal(sql("SELECT state FROM run WHERE cluster = 'edge' AND external_id = 'dup1'").trim(), 'COMPLETED');
  assert.equal(sql("SELECT count(*) FROM run WHERE cluster = 'edge'").trim(), '4');
});

test('retention drops the old months only when configured, and their runs can come back', async () => {
  const { srv: own, as: asOwn } = await evidenceServer();
  try {
    const db = own.db;
    const now = new Date();
    const old = Date.UTC(now.getUTCFullYear() - 3, 4, 10); // a May three years ago
    const recent = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1, 12);
    const jobs = [
      { id: 'old1', team: 'vision', partition: 'p', state: 'COMPLETED', submit: old, start: old + 60e3, end: old + 3600e3, gpus: 1 },
      { id: 'new1', team: 'vision', partition: 'p', state: 'COMPLETED', submit: recent, start: recent + 60e3, end: recent + 3600e3, gpus: 1 },
    ];
    const post = () => asOwn('owner1', 'POST', '/runs?cluster=ret', text(sacct(jobs)));
    assert.equal((await post()).json.inserted, 2);
    sql('SELECT capledger_partitions_maintain(3, 0)', db);
    const oldPart = `run_p${monthName(new Date(old))}`;
    // a sample of that month too (the idle report reads samples through their upload)
    sql(`INSERT INTO telemetry_sample (upload_id, benchmark_id, ts, gpu) VALUES (gen_random_uuid(), gen_random_uuid(), '${new Date(old).toISOString()}', '0')`, db);
    sql('SELECT capledger_partitions_maintain(3, 0)', db);
    const oldSamples = `telemetry_sample_p${monthName(new Date(old))}`;
    assert.ok(partitionsOf('run', db).includes(oldPart));
    assert.ok(partitionsOf('telemetry_sample', db).includes(oldSamples));

    const restart = async (env) => {
      const s = await startServer({ env: { CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, db), CAPLEDGER_KEY_FILE: own.keyFile, ...env } });
      await s.stop();
    };
    // unset, and a retention longer than the data's age: nothing goes
    await restart({});
    await restart({ CAPLEDGER_RETENTION_MONTHS: '48' });
    assert.ok(partitionsOf('run', db).includes(oldPart));
    assert.equal(sql("SELECT count(*) FROM run WHERE cluster = 'ret'", db).trim(), '2');
    // 24 months: the May three years ago ended more than 24 whole months before this month
    await restart({ CAPLEDGER_RETENTION_MONTHS: '24' });
    assert.ok(!partitionsOf('run', db).includes(oldPart), partitionsOf('run', db).join());
    assert.ok(!partitionsOf('telemetry_sample', db).includes(oldSamples));
    assert.ok(partitionsOf('run', db).includes(`run_p${monthName(now)}`));
    assert.equal(sql("SELECT string_agg(external_id, ',') FROM run WHERE cluster = 'ret'", db).trim(), 'new1');
    // the dropped run's key went with it: uploading it again stores it again
    const back = await post();
    assert.equal(back.json.inserted, 1, back.text);
    assert.equal(back.json.duplicates, 1, back.text);
  } finally {
    await own.stop();
  }
});

// percentile_cont: linear interpolation between the closest ranks
function percentile(sorted, p) {
  if (!sorted.length) return null;
  const x = p * (sorted.length - 1);
  const lo = Math.floor(x);
  const hi = Math.ceil(x);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo);
}

test('the usage report over runs in many partitions equals a computation from the file', async () => {
  const put = await as('owner1', 'PUT', '/clusters/spread', {
    body: { partitions: [
      { partition: 'h100', workload_class: 'production', offer_id: h100.id },
      { partition: 'a100', workload_class: 'exploratory', offer_id: a100.id },
      { partition: 'debug', workload_class: 'exploratory' }, // classed, not priced
    ] },
  });
  assert.equal(put.status, 200, put.text);
  // 600 jobs over 26 months (some before any partition the server made: the default), a
  // deterministic pseudo-random mix of partitions, teams, states, GPUs and queue waits
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const states = ['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'OUT_OF_MEMORY'];
  const t0 = Date.UTC(2024, 10, 3, 7, 13, 5);
  const jobs = [];
  for (let i = 0; i < 600; i++) {
    const submit = t0 + Math.floor(i * 26 * 30.4 * 86400e3 / 600 / 1000) * 1000;
    const wait = Math.floor(Math.exp(rnd() * 9)) * 1000;
    const start = rnd() < 0.05 ? null : submit + wait;
    jobs.push({ id: `s${i}`, team: rnd() < 0.5 ? 'vision' : 'nlp', partition: ['h100', 'a100', 'debug'][Math.floor(rnd() * 3)],
      state: states[Math.floor(rnd() * states.length)], submit, start,
      end: (start ?? submit) + Math.floor(rnd() * 20000) * 1000, gpus: [0, 1, 2, 8][Math.floor(rnd() * 4)] });
  }
  const up = await as('owner1', 'POST', '/runs?cluster=spread', text(sacct(jobs)));
  assert.equal(up.status, 201, up.text);
  assert.equal(up.json.inserted, 600, up.text);
  sql('SELECT capledger_partitions_maintain(3, 0)');
  const parts = new Set(sql("SELECT DISTINCT tableoid::regclass FROM run WHERE cluster = 'spread'").trim().split('\n'));
  assert.ok(parts.size >= 20, [...parts].join());

  const price = { h100: 98.32 / 8, a100: 14.32 / 8, debug: null };
  const klass = { h100: 'production', a100: 'exploratory', debug: 'exploratory' };
  const close = (a, b, what) => assert.ok(a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
  const from = Date.UTC(2025, 1, 17, 9, 30, 0);
  const to = Date.UTC(2026, 2, 4, 18, 0, 0);
  for (const [query, pick] of [['', () => true], [`&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`, (j) => j.submit >= from && j.submit < to]]) {
    const r = await as('owner1', 'GET', `/reports/usage?group_by=team,workload_class,cluster${query}`);
    assert.equal(r.status, 200, r.text);
    r.json.groups = r.json.groups.filter((g) => g.cluster === 'spread');
    const want = {};
    const unpriced = {};
    for (const j of jobs.filter(pick)) {
      const g = want[`${j.team}/${klass[j.partition]}`] ??= { runs: 0, gpuRuns: 0, gh: 0, failedRuns: 0, failedGh: 0, waits: [], never: 0, cost: 0, failedCost: 0, priced: 0, unpricedGh: 0, unpricedRuns: 0, byState: {} };
      const gh = j.start === null ? 0 : j.gpus * (j.end - j.start) / 3600e3;
      g.runs++;
      g.gh += gh;
      g.byState[j.state] = (g.byState[j.state] ?? 0) + gh;
      if (j.start === null) g.never++;
      if (j.gpus > 0) {
        g.gpuRuns++;
        if (j.state !== 'COMPLETED') g.failedRuns++;
        if (j.start !== null) g.waits.push((j.start - j.submit) / 1000);
      }
      if (j.state !== 'COMPLETED') g.failedGh += gh;
      const p = price[j.partition];
      if (p === null) {
        if (gh > 0) { g.unpricedRuns++; g.unpricedGh += gh; const u = unpriced[j.partition] ??= { runs: 0, gh: 0 }; u.runs++; u.gh += gh; }
      } else {
        g.cost += gh * p;
        g.priced += gh;
        if (j.state !== 'COMPLETED') g.failedCost += gh * p;
      }
    }
    assert.deepEqual(r.json.groups.map((g) => `${g.team}/${g.workload_class}`), Object.keys(want).sort());
    for (const g of r.json.groups) {
      const w = want[`${g.team}/${g.workload_class}`];
      const what = `${g.team}/${g.workload_class}${query}`;
      assert.equal(g.runs, w.runs, what);
      assert.equal(g.gpu_runs, w.gpuRuns, what);
      assert.equal(g.never_started, w.never, what);
      close(g.gpu_hours, w.gh, `${what} GPU-hours`);
      for (const [s, h] of Object.entries(w.byState)) close(g.gpu_hours_by_state[s], h, `${what} ${s}`);
      assert.deepEqual(Object.keys(g.gpu_hours_by_state).sort(), Object.keys(w.byState).sort());
      close(g.failure_rate, w.failedRuns / w.gpuRuns, `${what} failure rate`);
      close(g.failed_gpu_hours_share, w.failedGh / w.gh, `${what} failed share`);
      const waits = w.waits.sort((a, b) => a - b);
      close(g.queue_wait_s.mean, waits.reduce((s, x) => s + x, 0) / waits.length, `${what} mean wait`);
      close(g.queue_wait_s.p50, percentile(waits, 0.5), `${what} p50`);
      close(g.queue_wait_s.p90, percentile(waits, 0.9), `${what} p90`);
      close(g.queue_wait_s.p99, percentile(waits, 0.99), `${what} p99`);
      assert.equal(g.mean_gpu_utilization, null); // sacct has none
      close(g.cost.amount, w.cost, `${what} cost`);
      close(g.cost.failed_amount, w.failedCost, `${what} cost of runs that did not complete`);
      close(g.cost.failed_share, w.failedCost / w.cost, `${what} failed cost share`);
      close(g.cost.priced_gpu_hours, w.priced, `${what} priced GPU-hours`);
      close(g.cost.unpriced_gpu_hours, w.unpricedGh, `${what} unpriced GPU-hours`);
      assert.equal(g.cost.unpriced_runs, w.unpricedRuns, what);
    }
    const listed = r.json.unpriced.filter((u) => u.cluster === 'spread');
    assert.deepEqual(listed.map((u) => [u.partition, u.runs]), Object.entries(unpriced).map(([p, u]) => [p, u.runs]));
    for (const u of listed) close(u.gpu_hours, unpriced[u.partition].gh, 'unpriced list');
  }
});
