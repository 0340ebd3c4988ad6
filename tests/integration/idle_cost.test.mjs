// The idle report priced: each benchmark's telemetry GPU-hours (a sample stands for its
// upload's time span × GPUs / samples) at its offer's price per GPU-hour, the idle share of it,
// per benchmark and per team; samples without timestamps are unpriced and counted. The
// expected figures are worked out here from the sample file itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

let srv, as, train, offer, eur;
before(async () => {
  ({ srv, as } = await evidenceServer());
  train = await makeWorkload(as, 'ana', { team: 'vision', name: 'train', kind: 'training', class: 'production' });
  offer = await makeOffer(as, { instance_type: 'gpu_8x_a100_80gb_sxm4', gpu_model: 'A100-80GB', price_per_hour: 14.32 });
  eur = await makeOffer(as, { instance_type: 'gpu_8x_a100_80gb_eu', gpu_model: 'A100-80GB', price_per_hour: 12, currency: 'EUR' });
});
after(async () => { await srv?.stop(); });

const close = (got, want, what, tol = 1e-9) =>
  assert.ok(Math.abs(got - want) <= tol * Math.max(1, Math.abs(want)), `${what}: ${got} vs ${want}`);

async function benchmark(offerId) {
  const b = await as('ana', 'POST', '/benchmarks', {
    body: { workload_id: train.id, offer_id: offerId, measured_at: '2024-03-13T07:05:00Z', throughput_units_per_s: 100 },
  });
  assert.equal(b.status, 201, b.text);
  return b.json;
}

// The NeSI series: 1 GPU, timestamps "YYYY/MM/DD hh:mm:ss.mmm", utilization.gpu in column 2.
const nesi = sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv').toString();
function nesiFigures(idleBelow) {
  const rows = nesi.trimEnd().split('\n').slice(1).map((l) => l.split(', '));
  const ts = rows.map((r) => Date.parse(`${r[0].replace(/\//g, '-').replace(' ', 'T')}Z`) / 1000);
  const span = ts[ts.length - 1] - ts[0];
  const sampleS = span * 1 / rows.length;
  const idle = rows.filter((r) => Number(r[1]) / 100 < idleBelow).length;
  return { gh: rows.length * sampleS / 3600, idleGh: idle * sampleS / 3600 };
}

test('idle report: GPU-hours and idle GPU-hours priced by the benchmark\'s offer; a re-upload moves nothing', async () => {
  const b = await benchmark(offer.id);
  const up = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry?idle_below=0.3`, text(nesi));
  assert.equal(up.status, 201, up.text);
  const want = nesiFigures(0.3);
  const perGpuHour = 14.32 / 8;
  const check = async () => {
    const r = await as('ana', 'GET', '/reports/idle?team=vision');
    assert.equal(r.status, 200, r.text);
    const row = r.json.benchmarks.find((x) => x.benchmark_id === b.id);
    close(row.gpu_hours, want.gh, 'gpu_hours');
    close(row.idle_gpu_hours, want.idleGh, 'idle_gpu_hours');
    assert.equal(row.cost.currency, 'USD');
    close(row.cost.amount, want.gh * perGpuHour, 'amount');
    close(row.cost.idle_amount, want.idleGh * perGpuHour, 'idle_amount');
    close(row.cost.idle_share, 5 / 7, 'idle share: 5 of 7 samples under 30 %');
    assert.equal(row.unpriced_samples, 0);
    return r.json;
  };
  await check();
  const again = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry?idle_below=0.3`, text(nesi));
  assert.equal(again.json.duplicates, 7, again.text);
  const report = await check();
  const [team] = report.teams;
  close(team.cost.amount, want.gh * perGpuHour, 'the team: one benchmark');
  assert.deepEqual(team.currencies, ['USD']);
});

test('idle report: samples without timestamps are unpriced; two currencies in a team leave its cost null', async () => {
  const b = await benchmark(offer.id);
  const dmon = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry?format=dmon`, text(sample('nvidia-smi-dmon/deepspeech_issue178_dmon_s_pucvmet_4gpu_oldformat.txt')));
  assert.equal(dmon.status, 201, dmon.text);
  assert.equal(dmon.json.summary.time_span_s, null, 'dmon without -o DT has no timestamps');
  let r = await as('ana', 'GET', '/reports/idle?team=vision');
  const row = r.json.benchmarks.find((x) => x.benchmark_id === b.id);
  assert.equal(row.unpriced_samples, dmon.json.inserted);
  assert.equal(row.gpu_hours, null);
  assert.equal(row.cost, null);
  // A benchmark on a EUR offer: its own cost is in EUR, the team's mixes currencies.
  const e = await benchmark(eur.id);
  const up = await as('ana', 'POST', `/benchmarks/${e.id}/telemetry?idle_below=0.3`, text(nesi));
  assert.equal(up.status, 201, up.text);
  r = await as('ana', 'GET', '/reports/idle?team=vision');
  const erow = r.json.benchmarks.find((x) => x.benchmark_id === e.id);
  assert.equal(erow.cost.currency, 'EUR');
  close(erow.cost.amount, nesiFigures(0.3).gh * 12 / 8, 'EUR amount');
  const [team] = r.json.teams;
  assert.equal(team.cost, null);
  assert.deepEqual(team.currencies.sort(), ['EUR', 'USD']);
});
