// Clusters as a resource: per partition (and GPU model) the workload class of its runs and the
// offer that prices them. sacct uploads are classed by ?class=, else by the map, else by the
// cluster's default class; runs keep the raw partition; the usage report prices GPU-hours from
// the map and says which runs had no price. The expected figures are worked out here, in
// JavaScript, from the files themselves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from './lib/harness.mjs';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

let srv, as, a100, h100, eur;
before(async () => {
  ({ srv, as } = await evidenceServer());
  a100 = await makeOffer(as, { provider: 'lambda', instance_type: 'gpu_8x_a100_80gb_sxm4', gpu_model: 'A100-80GB', price_per_hour: 14.32 });
  h100 = await makeOffer(as); // 98.32 USD per 8 GPUs
  eur = await makeOffer(as, { region: 'eu-central-1', currency: 'EUR', price_per_hour: 90 });
});
after(async () => { await srv?.stop(); });

// The 32 fields of the Fox cluster's `sacct -aP --noheader -o …` (PROVENANCE.md).
const FOX_FIELDS = 'JobID,JobIDRaw,User,Account,State,Start,End,AveCPU,AveDiskRead,AveDiskWrite,AveRSS,AveVMSize,ElapsedRaw,ExitCode,Layout,MaxRSS,MaxVMSize,MinCPU,ReqCPUS,ReqMem,ReqNodes,Reservation,Submit,Suspended,SystemCPU,TimelimitRaw,UserCPU,NodeList,Partition,AllocTRES,Priority,JobName';
const foxText = sample('sacct/sonar_fox_sacct_aP_noheader_gpu.txt').toString();
// Finished jobs (no steps, no RUNNING/PENDING) of the Fox sample: {partition, gpuModel, gpu}.
function foxJobs() {
  const cols = FOX_FIELDS.split(',');
  const at = (name) => cols.indexOf(name);
  return foxText.trimEnd().split('\n').map((l) => l.split('|')).filter((f) => !f[at('JobID')].includes('.'))
    .filter((f) => !/^(RUNNING|PENDING)/.test(f[at('State')]))
    .map((f) => {
      const tres = f[at('AllocTRES')];
      const typed = [...new Set([...tres.matchAll(/gres\/gpu:([^=,]+)=/g)].map((m) => m[1]))];
      return { partition: f[at('Partition')], gpuModel: typed.length === 1 ? typed[0] : null, gpu: /gres\/gpu[:=]/.test(tres) };
    });
}

test('PUT /clusters/{name}: owners only, every fault named, one currency across the maps', async () => {
  const body = { partitions: [{ partition: 'autotekst', workload_class: 'production', offer_id: a100.id }] };
  assert.equal((await as('ana', 'PUT', '/clusters/fox', { body })).status, 403);
  assert.equal((await as('admin', 'PUT', '/clusters/fox', { body })).status, 403);
  const bad = await as('owner1', 'PUT', '/clusters/fox', {
    body: { default_class: 'a\u0007b', partitions: [{ partition: 'a' }, { partition: 'b', workload_class: 'production' }, { partition: 'b', workload_class: 'exploratory' }, { partition: '', offer_id: 'x' }], colour: 1 },
  });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.errors.map((e) => e.pointer).sort(),
    ['/colour', '/default_class', '/partitions/0', '/partitions/2', '/partitions/3/offer_id', '/partitions/3/partition'].sort());
  const missing = await as('owner1', 'PUT', '/clusters/fox', { body: { partitions: [{ partition: 'a', offer_id: '00000000-0000-4000-8000-000000000000' }] } });
  assert.equal(missing.status, 422, missing.text);
  assert.equal(missing.json.errors[0].pointer, '/partitions/0/offer_id');
  const mixed = await as('owner1', 'PUT', '/clusters/fox', { body: { partitions: [{ partition: 'a', offer_id: a100.id }, { partition: 'b', offer_id: eur.id }] } });
  assert.equal(mixed.status, 422, mixed.text);
  assert.equal(mixed.json.errors[0].pointer, '/partitions/1/offer_id');
  assert.match(mixed.json.errors[0].message, /priced in EUR; the cluster maps price in USD/);
  assert.equal((await as('ana', 'GET', '/clusters/fox')).status, 404, 'nothing was written');
});

test('sacct runs classed by the map (partition and GPU model), by ?class=, else by the default; the checklist counts them', async () => {
  const put = await as('owner1', 'PUT', '/clusters/fox', {
    body: {
      default_class: 'exploratory',
      description: 'Fox, UiO',
      partitions: [
        { partition: 'autotekst', workload_class: 'production', offer_id: a100.id },
        { partition: 'accel', gpu_model: 'a100_80', workload_class: 'production', offer_id: h100.id },
        { partition: 'accel', offer_id: a100.id },
      ],
    },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.json.version, 1);
  assert.equal(put.json.partitions.length, 3);
  const accel80 = put.json.partitions.find((p) => p.gpu_model === 'a100_80');
  assert.ok(Math.abs(accel80.price_per_gpu_hour - 98.32 / 8) < 1e-12);
  assert.equal(accel80.currency, 'USD');
  const list = await as('aud', 'GET', '/clusters');
  assert.deepEqual(list.json.items.map((c) => c.name), ['fox']);

  // A production workload of team vision and a review of it: no production runs yet.
  const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'tagger', kind: 'training', class: 'production' });
  const review = await as('owner1', 'POST', '/reviews', { body: { title: 'tagger capacity', workload_ids: [w.id], started_on: '2026-01-05' } });
  assert.equal(review.status, 201, review.text);
  const failures = async () => (await as('ana', 'GET', `/reviews/${review.json.id}/checklist`)).json.items.find((i) => i.item === 'failure and rerun rate');
  assert.match((await failures()).missing.join(' '), /backed by 0 GPU runs of team 'vision' and class 'production'/);

  const q = `team=vision&fields=${FOX_FIELDS}`;
  const up = await as('ana', 'POST', `/runs?cluster=fox&${q}`, text(foxText));
  assert.equal(up.status, 201, up.text);
  const jobs = foxJobs();
  const classOf = (j) => (j.partition === 'autotekst' || (j.partition === 'accel' && j.gpuModel === 'a100_80') ? 'production' : 'exploratory');
  const want = {};
  for (const j of jobs) want[classOf(j)] = (want[classOf(j)] || 0) + 1;
  assert.deepEqual(up.json.classes, want);
  assert.equal(up.json.inserted, jobs.length);
  // runs keep the raw partition and GPU model
  const stored = await as('ana', 'GET', `/runs?upload=${up.json.id}&limit=500`);
  const one = stored.json.items.find((r) => r.partition === 'accel' && r.gpu_model === 'a100_80');
  assert.ok(one, 'an accel job on a100_80');
  assert.equal(one.workload_class, 'production');
  const productionGpuRuns = jobs.filter((j) => j.gpu && classOf(j) === 'production').length;
  assert.ok(productionGpuRuns >= 20);
  const item = await failures();
  assert.equal(item.covered, true, JSON.stringify(item));
  assert.ok(item.evidence.includes(up.json.id), 'the checklist cites the upload');

  // ?class= classes every run of the upload, whatever the map says
  const all = await as('ana', 'POST', `/runs?cluster=fox-b&class=exploratory&${q}`, text(foxText));
  assert.deepEqual(all.json.classes, { exploratory: jobs.length });
  // a cluster with no map and no default: unclassified, said so
  const none = await as('ana', 'POST', `/runs?cluster=fox-c&${q}`, text(foxText));
  assert.deepEqual(none.json.classes, { unclassified: jobs.length });
  // any label is a class, as given (issue 21); 'unclassified' names runs without one
  assert.deepEqual((await as('ana', 'POST', `/runs?cluster=fox-d&class=urgent&${q}`, text(foxText))).json.classes, { urgent: jobs.length });
  assert.equal((await as('ana', 'POST', `/runs?cluster=fox-e&class=unclassified&${q}`, text(foxText))).status, 422);
});

// The Alibaba GPU trace (ATC'23 "openb"): qos is the raw partition, priced per class by the map.
test('usage report on the Alibaba trace: the cost per team and class equals a computation from the file', async () => {
  const file = fs.readFileSync(path.join(dataDir, 'traces/alibaba-gpu-v2023/openb_pod_list_default.csv'), 'utf8');
  const put = await as('owner1', 'PUT', '/clusters/alibaba', {
    body: {
      partitions: [
        { partition: 'LS', workload_class: 'production', offer_id: h100.id },
        { partition: 'Guaranteed', workload_class: 'production', offer_id: h100.id },
        { partition: 'BE', workload_class: 'exploratory', offer_id: a100.id },
        { partition: 'Burstable', workload_class: 'exploratory' }, // classed, not priced
      ],
    },
  });
  assert.equal(put.status, 200, put.text);
  const up = await as('owner1', 'POST', '/runs?cluster=alibaba&team=nlp&format=openb&trace_start=2023-01-01T00:00:00Z', text(file));
  assert.equal(up.status, 201, up.text);
  assert.equal(up.json.rejected_total, 0, up.text);

  // Independently: GPU-hours = num_gpu × (gpu_milli or 1000)/1000 × (deletion − scheduled)/3600
  // for pods that were scheduled; a run that did not complete is any phase but Succeeded.
  const price = { LS: 98.32 / 8, Guaranteed: 98.32 / 8, BE: 14.32 / 8, Burstable: null };
  const klass = { LS: 'production', Guaranteed: 'production', BE: 'exploratory', Burstable: 'exploratory' };
  const lines = file.trimEnd().split('\n');
  const cols = lines[0].split(',');
  const at = (n) => cols.indexOf(n);
  const want = {};
  let unpricedRuns = 0;
  let unpricedHours = 0;
  for (const line of lines.slice(1)) {
    const f = line.split(',');
    const g = want[klass[f[at('qos')]]] ??= { amount: 0, failed: 0, priced: 0, hours: 0 };
    if (f[at('scheduled_time')] === '') continue;
    const gpus = Number(f[at('num_gpu')]) * (Number(f[at('gpu_milli')]) || 1000) / 1000;
    const gh = gpus * (Number(f[at('deletion_time')]) - Number(f[at('scheduled_time')])) / 3600;
    g.hours += gh;
    const p = price[f[at('qos')]];
    if (p === null) { if (gh > 0) { unpricedRuns++; unpricedHours += gh; } continue; }
    g.amount += gh * p;
    g.priced += gh;
    if (f[at('pod_phase')] !== 'Succeeded') g.failed += gh * p;
  }
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
  const r = await as('owner1', 'GET', '/reports/usage?group_by=team,workload_class&team=nlp');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.currency, 'USD');
  assert.deepEqual(r.json.groups.map((g) => [g.team, g.workload_class]), [['nlp', 'exploratory'], ['nlp', 'production']]);
  for (const g of r.json.groups) {
    const w = want[g.workload_class];
    close(g.gpu_hours, w.hours, `${g.workload_class} GPU-hours`);
    close(g.cost.amount, w.amount, `${g.workload_class} cost`);
    close(g.cost.failed_amount, w.failed, `${g.workload_class} cost of runs that did not complete`);
    close(g.cost.failed_share, w.failed / w.amount, `${g.workload_class} failed share`);
    close(g.cost.priced_gpu_hours, w.priced, `${g.workload_class} priced GPU-hours`);
  }
  const exploratory = r.json.groups.find((g) => g.workload_class === 'exploratory');
  assert.equal(exploratory.cost.unpriced_runs, unpricedRuns);
  close(exploratory.cost.unpriced_gpu_hours, unpricedHours, 'unpriced GPU-hours');
  // which runs had no price: the Burstable partition of alibaba
  const unpriced = r.json.unpriced.filter((u) => u.cluster === 'alibaba');
  assert.deepEqual(unpriced.map((u) => [u.partition, u.runs]), [['Burstable', unpricedRuns]]);
  close(unpriced[0].gpu_hours, unpricedHours, 'unpriced list');
  // an explicit ?cluster_offers= price for the cluster comes before the map
  const flat = await as('owner1', 'GET', `/reports/usage?team=nlp&cluster_offers=alibaba:${a100.id}`);
  const total = Object.values(want).reduce((s, w) => s + w.hours, 0);
  close(flat.json.groups[0].cost.amount, total * 14.32 / 8, 'cluster_offers');
  assert.deepEqual(flat.json.unpriced, []);
});
