// Runs uploads stream straight into run a batch of 16,384 lines at a time
// (db/migrations/0110_run_ingest_direct.sql, server/store/runs.c). Over several batches: the
// first line of a key wins (a later line of the same job, even in another batch, is a
// duplicate), a re-upload stores nothing, the classes follow the cluster's map, the rollups and
// histograms the server summed equal a rebuild from run, two overlapping uploads at once store
// each job once, and an upload that fails leaves nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { psql } from './lib/harness.mjs';
import { evidenceServer, text } from './evidence.lib.mjs';

let srv, as;
before(async () => { ({ srv, as } = await evidenceServer()); });
after(async () => { await srv?.stop(); });

const sql = (q) => psql(q, { database: srv.db });
const HEADER = 'JobID|JobIDRaw|User|Account|Partition|State|Submit|Start|End|ExitCode|AllocTRES';
const iso = (ms) => new Date(ms).toISOString().slice(0, 19);
const t0 = Date.UTC(2025, 2, 1, 0, 0, 0);
const job = (i, state = 'COMPLETED') => {
  const submit = t0 + i * 37000;
  const start = i % 23 === 0 ? 'Unknown' : iso(submit + (i % 11) * 60000);
  const gpus = i % 4;
  const tres = gpus ? `cpu=8,gres/gpu:${i % 2 ? 'a100' : 'h100'}=${gpus},gres/gpu=${gpus},mem=64G` : 'cpu=4,mem=16G';
  return [`j${i}`, `j${i}`, `u${i % 7}`, i % 3 ? 'vision' : 'nlp', i % 5 ? 'gpu' : 'debug', state, iso(submit), start,
    iso(submit + 3600000 + (i % 13) * 1000), state === 'COMPLETED' ? '0:0' : '1:0', tres].join('|');
};
const sacct = (lines) => [HEADER, ...lines].join('\n') + '\n';
const N = 40000; // three batches

// the rollups and histograms as text (GPU-hours and utilisation to 9 significant digits: a sum
// of doubles in another order may differ in its last bits)
const dump = () => sql(`SELECT md5(string_agg(x, ';' ORDER BY x)) FROM (
  SELECT concat_ws(',', 'd', day, team, workload_class, cluster, partition, gpu_model, state, runs, gpu_runs, gh_runs,
    never_started, round(gh::numeric, 6), qw_sum, qw_n, round(util_sum::numeric, 6), util_n) AS x FROM run_usage_day
  UNION ALL SELECT concat_ws(',', 'm', month, team, workload_class, cluster, partition, gpu_model, state, runs, gpu_runs,
    gh_runs, never_started, round(gh::numeric, 6), qw_sum, qw_n, round(util_sum::numeric, 6), util_n) FROM run_usage_month
  UNION ALL SELECT concat_ws(',', 'h', month, team, workload_class, cluster, state, bucket, n) FROM run_qw_hist
  UNION ALL SELECT concat_ws(',', 'a', team, workload_class, cluster, state, bucket, n) FROM run_qw_hist_all
  UNION ALL SELECT concat_ws(',', 'u', upload_id, month, team, workload_class, cluster, gpu_runs, qw_n) FROM run_usage_upload) s`);

test('several batches: first line wins, classes by the map, rollups equal a rebuild, a re-upload stores nothing', async () => {
  const put = await as('owner1', 'PUT', '/clusters/ingest', { body: { default_class: 'exploratory', partitions: [
    { partition: 'gpu', gpu_model: 'h100', workload_class: 'production' }, { partition: 'debug', workload_class: 'production' }] } });
  assert.ok(put.status === 200 || put.status === 201, put.text);
  const lines = [];
  for (let i = 0; i < N; i++) lines.push(job(i));
  // repeats of jobs from the first batch, in the third batch, with another state: duplicates
  for (let i = 0; i < 500; i++) lines.push(job(i * 3, 'FAILED'));
  // and a repeat within one batch
  lines.splice(10, 0, job(5, 'TIMEOUT'));
  const up = await as('owner1', 'POST', '/runs?cluster=ingest', text(sacct(lines)));
  assert.equal(up.status, 201, up.text);
  assert.equal(up.json.inserted, N);
  assert.equal(up.json.duplicates, 501);
  assert.equal(Number(sql("SELECT count(*) FROM run WHERE cluster = 'ingest' AND state <> 'COMPLETED'")), 0);
  assert.equal(Number(sql("SELECT count(*) FROM run_key WHERE cluster = 'ingest'")), N);
  // classes: gpu + h100 → production (map by model), debug → production (map by partition), the rest the default
  const expected = { production: 0, exploratory: 0 };
  for (let i = 0; i < N; i++) expected[(i % 5 === 0 || (i % 4 && i % 2 === 0)) ? 'production' : 'exploratory']++;
  assert.deepEqual(up.json.classes, expected);
  const bad = sql(`SELECT count(*) FROM run WHERE cluster = 'ingest' AND workload_class IS DISTINCT FROM
    CASE WHEN partition = 'debug' OR gpu_model = 'h100' THEN 'production' ELSE 'exploratory' END`);
  assert.equal(Number(bad), 0);
  const before = dump();
  sql('SELECT capledger_usage_rollup_rebuild()');
  assert.equal(dump(), before);
  assert.equal(Number(sql('SELECT sum(runs) FROM run_usage_day')), Number(sql('SELECT count(*) FROM run')));
  assert.equal(Number(sql(`SELECT sum(gpu_runs) FROM run_usage_upload WHERE upload_id = '${up.json.id}'`)),
    Number(sql("SELECT count(*) FROM run WHERE cluster = 'ingest' AND gpus > 0")));
  // ids: one block of the sequence per batch, in line order within it, unique
  assert.equal(Number(sql("SELECT count(DISTINCT id) FROM run WHERE cluster = 'ingest'")), N);
  const blocks = sql(`SELECT count(DISTINCT id / 16384) || ',' || bool_and(ordered) FROM (SELECT id,
    (id > lag(id) OVER (ORDER BY substr(external_id, 2)::int)) IS NOT FALSE AS ordered FROM run WHERE cluster = 'ingest') x`).trim();
  assert.ok(/^[3-6],true$/.test(blocks), blocks);
  const again = await as('owner1', 'POST', '/runs?cluster=ingest', text(sacct(lines)));
  assert.equal(again.status, 201, again.text);
  assert.equal(again.json.inserted, 0);
  assert.equal(again.json.duplicates, N + 501);
  assert.deepEqual(again.json.classes, {});
  assert.equal(dump(), before);
});

test('two overlapping uploads at once store each job once', async () => {
  const a = [], b = [];
  for (let i = 0; i < 30000; i++) a.push(job(100000 + i));
  for (let i = 20000; i < 50000; i++) b.push(job(100000 + i));
  for (let i = 0; i < 100; i++) b.push(job(100000 + i)); // also a's first lines, last in b
  const [ra, rb] = await Promise.all([
    as('owner1', 'POST', '/runs?cluster=overlap', text(sacct(a))),
    as('owner1', 'POST', '/runs?cluster=overlap', text(sacct(b))),
  ]);
  assert.equal(ra.status, 201, ra.text);
  assert.equal(rb.status, 201, rb.text);
  assert.equal(ra.json.inserted + rb.json.inserted, 50000);
  assert.equal(ra.json.duplicates + rb.json.duplicates, 10100);
  assert.equal(Number(sql("SELECT count(*) FROM run WHERE cluster = 'overlap'")), 50000);
  assert.equal(Number(sql("SELECT count(DISTINCT external_id) FROM run WHERE cluster = 'overlap'")), 50000);
  assert.equal(Number(sql("SELECT sum(runs) FROM run_usage_day WHERE cluster = 'overlap'")), 50000);
});

test('an upload that fails stores nothing, not even its first batches', async () => {
  const lines = [];
  for (let i = 0; i < 20000; i++) lines.push(job(200000 + i));
  lines.push('bad|line');
  const up = await as('owner1', 'POST', '/runs?cluster=atomic&atomic=true', text(sacct(lines)));
  assert.equal(up.status, 422, up.text);
  assert.equal(Number(sql("SELECT count(*) FROM run WHERE cluster = 'atomic'")), 0);
  assert.equal(Number(sql("SELECT count(*) FROM run_key WHERE cluster = 'atomic'")), 0);
  assert.equal(Number(sql("SELECT count(*) FROM run_usage_day WHERE cluster = 'atomic'")), 0);
});
