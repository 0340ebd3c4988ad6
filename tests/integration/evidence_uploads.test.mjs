// Every real tool output in tests/data/samples uploaded through the API, with the parsed
// counts and summaries checked against figures worked out independently of capledger's
// readers (the awk commands or the plain reading that gave each figure are next to it). Also:
// duplicates on re-upload, atomic uploads, per-line rejections, team scoping of runs, the runs
// list, the usage report (recomputed here from the runs sent) and the idle report.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SAMPLES, evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

let srv, as;
let serve, train, offer;
before(async () => {
  ({ srv, as } = await evidenceServer());
  serve = await makeWorkload(as, 'ana', { team: 'vision', name: 'serve', kind: 'inference', class: 'production' });
  train = await makeWorkload(as, 'ana', { team: 'vision', name: 'train', kind: 'training', class: 'production' });
  offer = await makeOffer(as);
});
after(async () => { await srv?.stop(); });

const close = (actual, expected, what, tol = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)), `${what}: ${actual} vs ${expected}`);

// The 32 fields of the Fox cluster's `sacct -aP --noheader -o …` (PROVENANCE.md: sonar's
// SACCT_FIELDS).
const FOX_FIELDS = 'JobID,JobIDRaw,User,Account,State,Start,End,AveCPU,AveDiskRead,AveDiskWrite,AveRSS,AveVMSize,ElapsedRaw,ExitCode,Layout,MaxRSS,MaxVMSize,MinCPU,ReqCPUS,ReqMem,ReqNodes,Reservation,Submit,Suspended,SystemCPU,TimelimitRaw,UserCPU,NodeList,Partition,AllocTRES,Priority,JobName';

describe('job accounting (sacct)', () => {
  // Figures from:  awk -F'|' '{ if ($1 ~ /\./) steps++; else { s=$5; sub(/ by .*/,"",s);
  //   if (s ~ /^(PENDING|RUNNING|REQUEUED|SUSPENDED)$/) unf++; else fin++ } }
  //   END {print fin, unf, steps}' FILE
  // gpu file: 59 finished jobs, 63 unfinished, 179 steps; 2024 file: 29, 0, 67.
  test('Fox GPU jobs (noheader, ?fields=): finished jobs stored, unfinished skipped, steps left out', async () => {
    const body = sample('sacct/sonar_fox_sacct_aP_noheader_gpu.txt');
    const r = await as('owner1', 'POST', `/runs?cluster=fox&fields=${FOX_FIELDS}`, text(body));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.inserted, 59);
    assert.equal(r.json.skipped, 63);
    assert.equal(r.json.steps_skipped, 179);
    assert.equal(r.json.duplicates, 0);
    assert.equal(r.json.rejected_total, 0);
    const again = await as('owner1', 'POST', `/runs?cluster=fox&fields=${FOX_FIELDS}`, text(body));
    assert.equal(again.status, 201);
    assert.equal(again.json.inserted, 0);
    assert.equal(again.json.duplicates, 59, 're-uploading stores nothing twice');
    // awk -F'|' '$1 !~ /\./ && $5 ~ /^CANCELLED/' FILE | wc -l  → 5 ("CANCELLED by N" included)
    const cancelled = await as('owner1', 'GET', '/runs?cluster=fox&state=CANCELLED&limit=500');
    assert.equal(cancelled.json.items.length, 5);
    // GPUs: the plain gres/gpu=N of AllocTRES (column 30) counts, the typed one does not add:
    // awk -F'|' '$1 !~ /\./ && $5 !~ /^(PENDING|RUNNING)/ { g=0; if (match($30, /gres\/gpu=[0-9]+/))
    //   g=substr($30, RSTART+9, RLENGTH-9); n+=g>0; tot+=g } END {print n, tot}' FILE → 47 47
    const fox = (await as('owner1', 'GET', '/runs?cluster=fox&limit=500')).json.items;
    assert.equal(fox.filter((x) => x.gpus > 0).length, 47);
    assert.equal(fox.reduce((s, x) => s + x.gpus, 0), 47);
  });

  test('Fox 2024 jobs: 29 finished, steps numbered .0/.1 skipped', async () => {
    const r = await as('owner1', 'POST', `/runs?cluster=fox2024&fields=${FOX_FIELDS}`, text(sample('sacct/sonar_fox_sacct_aP_noheader_2024.txt')));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.inserted, 29);
    assert.equal(r.json.steps_skipped, 67);
    const runs = (await as('owner1', 'GET', '/runs?cluster=fox2024&limit=500')).json.items;
    assert.equal(runs.length, 29);
    // same awk as above over this file → 16 jobs with a GPU, 16 GPUs (PROVENANCE.md's "no
    // gres/gpu" is not right: 16 of its jobs have gres/gpu=1)
    assert.equal(runs.filter((x) => x.gpus > 0).length, 16);
    assert.equal(runs.reduce((s, x) => s + x.gpus, 0), 16);
  });

  test('the galvani sample lacks Submit/Start/End: 422 naming each missing column', async () => {
    const r = await as('owner1', 'POST', '/runs?cluster=galvani', text(sample('sacct/cluster_utils_issue87_sacct_parsable2.txt')));
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.json.errors.map((e) => e.pointer).sort(), ['/ended_at', '/started_at', '/submitted_at']);
    assert.ok(r.json.errors.every((e) => e.line === 1), 'the header line is at fault');
  });

  test('per-line faults are listed with line numbers while valid lines are kept; atomic keeps nothing', async () => {
    const lines = [
      'JobIDRaw|State|Submit|Start|End|Account|AllocTRES',
      '9001|COMPLETED|2025-02-01T10:00:00|2025-02-01T10:05:00|2025-02-01T11:05:00|vision|gres/gpu=8',
      '9002|EXPLODED|2025-02-01T10:00:00|2025-02-01T10:05:00|2025-02-01T11:05:00|vision|gres/gpu=8',
      '9003|FAILED|2025-02-01T10:00:00|2025-02-01T09:05:00|2025-02-01T11:05:00|vision|gres/gpu=2',
      '9004|CANCELLED by 42|2025-02-01T10:00:00|None|2025-02-01T10:01:00|vision|',
    ].join('\n') + '\n';
    const atomic = await as('ana', 'POST', '/runs?cluster=lines&atomic=true', text(lines));
    assert.equal(atomic.status, 422, atomic.text);
    assert.deepEqual(atomic.json.errors.map((e) => e.line), [3, 4]);
    assert.equal((await as('ana', 'GET', '/runs?cluster=lines')).json.items.length, 0, 'atomic: nothing kept');
    const r = await as('ana', 'POST', '/runs?cluster=lines', text(lines));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.inserted, 2);
    assert.equal(r.json.rejected_total, 2);
    assert.deepEqual(r.json.rejected.map((e) => [e.line, e.pointer]), [[3, '/state'], [4, '/started_at']]);
    const kept = (await as('ana', 'GET', '/runs?cluster=lines')).json.items;
    assert.deepEqual(kept.map((x) => [x.external_id, x.state, x.gpus, x.started_at]),
      [['9001', 'COMPLETED', 8, '2025-02-01T10:05:00+00:00'], ['9004', 'CANCELLED', 0, null]]);
  });

  test('a control character in a job name or job id is a faulty line, in sacct and JSON alike', async () => {
    // they were stored and served back: an OSC retitling the terminal of whoever lists the runs
    const lines = [
      'JobIDRaw|JobName|State|Submit|Start|End|Account|AllocTRES',
      '9101|train\u001b]0;pwned\u0007|COMPLETED|2025-02-01T10:00:00|2025-02-01T10:05:00|2025-02-01T11:05:00|vision|gres/gpu=8',
      '9102|clean|COMPLETED|2025-02-01T10:00:00|2025-02-01T10:05:00|2025-02-01T11:05:00|vision|gres/gpu=8',
    ].join('\n') + '\n';
    const r = await as('ana', 'POST', '/runs?cluster=ctl', text(lines));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.rejected.map((e) => [e.line, e.pointer]), [[2, '/job_name']]);
    assert.match(r.json.rejected[0].message, /control characters \(U\+001B/);
    const runs = [{ external_id: 'j\u009b1', submitted_at: '2025-03-01T10:00:00Z', ended_at: '2025-03-01T11:00:00Z', state: 'COMPLETED', team: 'vision', gpus: 1 }];
    const j = await as('ana', 'POST', '/runs?cluster=ctl', { body: runs });
    assert.equal(j.status, 422, j.text);
    assert.equal(j.json.errors[0].pointer, '/0/external_id');
    assert.deepEqual((await as('ana', 'GET', '/runs?cluster=ctl')).json.items.map((x) => x.external_id), ['9102']);
  });

  test('?tz= reads offset-less times in that zone; ?team= replaces Account', async () => {
    const body = 'JobIDRaw|State|Submit|Start|End|Account\n7001|COMPLETED|2025-07-01T12:00:00|2025-07-01T12:00:00|2025-07-01T13:00:00|whatever\n';
    const r = await as('ana', 'POST', '/runs?cluster=tz&tz=Europe/Oslo&team=vision', text(body));
    assert.equal(r.status, 201, r.text);
    const [run] = (await as('ana', 'GET', '/runs?cluster=tz')).json.items;
    assert.equal(run.submitted_at, '2025-07-01T10:00:00+00:00', 'CEST is UTC+2 in July');
    assert.equal(run.team, 'vision');
    assert.equal((await as('ana', 'POST', '/runs?cluster=tz&tz=Mars/Olympus', text(body))).status, 422);
  });

  test('team members upload runs of their teams only', async () => {
    const body = 'JobIDRaw|State|Submit|Start|End|Account\n8001|COMPLETED|2025-07-01T12:00:00|2025-07-01T12:00:00|2025-07-01T13:00:00|nlp\n8002|COMPLETED|2025-07-01T12:00:00|2025-07-01T12:00:00|2025-07-01T13:00:00|vision\n';
    const r = await as('ana', 'POST', '/runs?cluster=scope', text(body));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.inserted, 1);
    assert.deepEqual(r.json.rejected.map((e) => [e.line, e.pointer]), [[2, '/team']]);
    assert.equal((await as('ana', 'POST', '/runs?cluster=scope&team=nlp', text(body))).status, 403);
    assert.equal((await as('aud', 'POST', '/runs?cluster=scope', text(body))).status, 403);
    const bobSees = (await as('bob', 'GET', '/runs?cluster=scope')).json.items;
    assert.deepEqual(bobSees, [], 'bob (nlp) does not see vision runs');
  });

  test('JSON array and JSON Lines runs; cursor pages through the list', async () => {
    const runs = Array.from({ length: 5 }, (_, i) => ({
      external_id: `j${i}`, team: 'vision', user: 'ana', workload_class: 'production',
      submitted_at: `2025-03-0${i + 1}T00:00:00Z`, started_at: `2025-03-0${i + 1}T00:10:00Z`,
      ended_at: `2025-03-0${i + 1}T02:10:00Z`, gpus: 0.5 * (i + 1), state: 'COMPLETED', exit_code: '0:0', gpu_utilization: 0.5,
    }));
    const a = await as('ana', 'POST', '/runs?cluster=json', { body: runs.slice(0, 3) });
    assert.equal(a.status, 201, a.text);
    assert.equal(a.json.inserted, 3);
    const nd = runs.slice(2).map((x) => JSON.stringify({ ...x, cluster: 'json' })).join('\n') + '\n{"external_id": 5}\n';
    const b = await as('ana', 'POST', '/runs', text(nd, 'application/x-ndjson'));
    assert.equal(b.status, 201, b.text);
    assert.equal(b.json.inserted, 2);
    assert.equal(b.json.duplicates, 1);
    assert.equal(b.json.rejected[0].line, 4);
    const ids = [];
    let cursor = null;
    do {
      const r = await as('ana', 'GET', `/runs?cluster=json&limit=2&from=2025-03-01T00:00:00Z&to=2025-04-01T00:00:00Z${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(r.status, 200, r.text);
      ids.push(...r.json.items.map((x) => x.external_id));
      cursor = r.json.next_cursor;
    } while (cursor);
    assert.deepEqual(ids, ['j0', 'j1', 'j2', 'j3', 'j4']);
  });
});

// PostgreSQL's percentile_cont: linear interpolation between the two nearest order statistics.
function percentileCont(values, p) {
  const v = [...values].sort((x, y) => x - y);
  if (!v.length) return null;
  const pos = p * (v.length - 1);
  const lo = Math.floor(pos), hi = Math.ceil(pos);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

describe('usage report', () => {
  test('figures per team and class match a recomputation from the runs sent', async () => {
    const t0 = Date.parse('2024-06-01T00:00:00Z');
    const states = ['COMPLETED', 'COMPLETED', 'FAILED', 'COMPLETED', 'TIMEOUT', 'CANCELLED', 'COMPLETED', 'OUT_OF_MEMORY'];
    const runs = states.map((state, i) => {
      const sub = t0 + i * 3600e3;
      const started = state === 'CANCELLED' ? null : sub + (i * 97 % 600) * 1000;
      return {
        external_id: `u${i}`, team: i % 2 ? 'vision' : 'nlp', workload_class: i % 3 ? 'production' : 'exploratory',
        submitted_at: new Date(sub).toISOString(), started_at: started === null ? null : new Date(started).toISOString(),
        ended_at: new Date((started ?? sub) + (1800 + i * 300) * 1000).toISOString(), gpus: i === 3 ? 0 : 2 + i, state,
        gpu_utilization: i % 4 === 0 ? null : 0.1 * i,
      };
    });
    const up = await as('owner1', 'POST', '/runs?cluster=report', { body: runs });
    assert.equal(up.status, 201, up.text);
    const r = await as('owner1', 'GET', `/reports/usage?group_by=team,workload_class&from=2024-06-01T00:00:00Z&to=2024-06-02T00:00:00Z&offer_id=${offer.id}`);
    assert.equal(r.status, 200, r.text);
    const pricePerGpuHour = offer.price_per_hour / offer.gpus_per_instance;
    const groups = new Map();
    for (const x of runs) {
      const key = `${x.team}/${x.workload_class}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(x);
    }
    assert.equal(r.json.groups.length, groups.size);
    for (const g of r.json.groups) {
      assert.deepEqual(Object.keys(g).filter((k) => ['team', 'workload_class', 'cluster', 'state'].includes(k)).sort(), ['team', 'workload_class']);
      const rs = groups.get(`${g.team}/${g.workload_class}`);
      const hours = (x) => (x.started_at ? x.gpus * (Date.parse(x.ended_at) - Date.parse(x.started_at)) / 3600e3 : 0);
      const gpuRuns = rs.filter((x) => x.gpus > 0);
      const gh = rs.reduce((s, x) => s + hours(x), 0);
      const failedGh = rs.filter((x) => x.state !== 'COMPLETED').reduce((s, x) => s + hours(x), 0);
      const waits = gpuRuns.filter((x) => x.started_at).map((x) => (Date.parse(x.started_at) - Date.parse(x.submitted_at)) / 1000);
      const utils = rs.filter((x) => x.gpu_utilization !== null).map((x) => x.gpu_utilization);
      assert.equal(g.runs, rs.length);
      assert.equal(g.gpu_runs, gpuRuns.length);
      close(g.gpu_hours, gh, 'gpu_hours');
      const orNull = (actual, expected, what) => (expected === null || Number.isNaN(expected) ? assert.equal(actual, null, what) : close(actual, expected, what));
      orNull(g.failure_rate, gpuRuns.filter((x) => x.state !== 'COMPLETED').length / gpuRuns.length, 'failure_rate');
      orNull(g.failed_gpu_hours_share, failedGh / gh, 'failed_gpu_hours_share');
      for (const [k, p] of [['p50', 0.5], ['p90', 0.9], ['p99', 0.99]]) orNull(g.queue_wait_s[k], percentileCont(waits, p), k);
      orNull(g.queue_wait_s.mean, waits.length ? waits.reduce((s, x) => s + x, 0) / waits.length : null, 'mean wait');
      assert.equal(g.never_started, rs.filter((x) => !x.started_at).length);
      if (utils.length) close(g.mean_gpu_utilization, utils.reduce((s, x) => s + x, 0) / utils.length, 'util');
      else assert.equal(g.mean_gpu_utilization, null);
      for (const [state, h] of Object.entries(g.gpu_hours_by_state))
        close(h, rs.filter((x) => x.state === state).reduce((s, x) => s + hours(x), 0), `hours ${state}`);
      close(g.cost.amount, gh * pricePerGpuHour, 'cost');
      assert.equal(g.cost.currency, 'USD');
    }
    const bob = await as('bob', 'GET', '/reports/usage?group_by=team&from=2024-06-01T00:00:00Z&to=2024-06-02T00:00:00Z');
    assert.deepEqual(bob.json.groups.map((g) => g.team), ['nlp'], 'team members see their teams only');
    assert.equal((await as('owner1', 'GET', '/reports/usage?group_by=user')).status, 422);
  });
});

// Figures for each telemetry sample (duty cycle mean, idle fraction under 0.05, memory peak in
// GiB, mean power, samples, GPUs), each worked out with awk from the file:
//   nvidia-smi CSV: awk -F', ' 'NR>1 {u=$COL; sub(/ %/,"",u); u+=0; s+=u; n++; if (u<5) idle++; …}'
//     (utilization.gpu / 100; memory.used MiB / 1024)
//   dmon: the `sm` column / 100, `fb` MiB / 1024, `pwr` W, GPUs = distinct first columns
//   DCGM: DCGM_FI_PROF_GR_ENGINE_ACTIVE (preferred over DEV_GPU_UTIL), DEV_FB_USED / 1024,
//     DEV_POWER_USAGE (grep -h '^DCGM_FI_…' FILE)
const TELEMETRY = [
  ['nvidia-smi/nesi_a100_nounits_l5_timeseries.csv', 'nvidia-smi', { samples: 7, gpus: 1, duty: 116 / 700, idle: 3 / 7, mem: 80257 / 1024, p50: 0.26, span: 30.013, longestIdle: 10.003 }],
  ['nvidia-smi/bpytop_issue26_2gpu_mixed_units.csv', 'nvidia-smi', { samples: 2, gpus: 2, duty: 0.18, idle: 0.5, mem: 2856 / 1024, power: 56.12 }],
  // MIG: utilization.gpu is [N/A], so no duty cycle; memory.used 11125 MiB, power.draw 433.78 W
  ['nvidia-smi/nvidia_gpu_exporter_h100-mig_590.48.01_load_query-gpu.csv', 'nvidia-smi', { samples: 1, gpus: 1, duty: null, mem: 11125 / 1024, power: 433.78 }],
  ['nvidia-smi-dmon/deepspeech_issue178_dmon_s_pucvmet_4gpu_oldformat.txt', 'dmon', { samples: 4, gpus: 4, duty: 0.2125, idle: 0, mem: 11660 / 1024, power: 105 }],
  ['nvidia-smi-dmon/dmon_i0_misaligned_enc100.txt', 'dmon', { samples: 11, gpus: 1, duty: 80 / 1100, idle: 0, mem: null, power: 689 / 11 }],
  ['nvidia-smi-dmon/nvidia_gpu_exporter_h200_590.48.01_load_dmon_c5.txt', 'dmon', { samples: 5, gpus: 1, duty: 1, idle: 0, mem: null, power: 629.8 }],
  ['dcgm/lke_rtx4000ada_k8s_podlabels_dcgm-exporter_metrics.prom', 'dcgm', { samples: 1, gpus: 1, duty: 0.004656, idle: 1, mem: 1 / 1024, power: 40.979, source: 'gr_engine_active' }],
  ['dcgm/upcloud_uks_l40s_dcgm-exporter_metrics.prom', 'dcgm', { samples: 1, gpus: 1, duty: 0, idle: 1, mem: 0, power: 35.686, source: 'gr_engine_active' }],
];

describe('GPU telemetry', () => {
  test('every sample: format detected, counts and summary as worked out by hand', async () => {
    for (const [file, format, want] of TELEMETRY) {
      const b = await as('ana', 'POST', '/benchmarks', { body: { workload_id: train.id, offer_id: offer.id, measured_at: '2025-04-01T00:00:00Z', throughput_units_per_s: 100 } });
      assert.equal(b.status, 201, b.text);
      // force=true: these samples come from many GPUs, the benchmark's offer is one H100; the
      // figures are what is checked here (the offer check: evidence_plausible.test.mjs)
      const r = await as('ana', 'POST', `/benchmarks/${b.json.id}/telemetry?force=true`, text(sample(file), 'text/plain'));
      assert.equal(r.status, 201, `${file}: ${r.text}`);
      const s = r.json.summary;
      assert.equal(r.json.format, format, file);
      assert.equal(r.json.samples, want.samples, file);
      assert.equal(s.samples, want.samples, file);
      assert.equal(s.gpus, want.gpus, file);
      if (want.duty === null) assert.equal(s.duty_cycle_mean, null, file);
      else close(s.duty_cycle_mean, want.duty, `${file} duty`);
      if ('idle' in want) close(s.idle_fraction, want.idle, `${file} idle`);
      if (want.mem === null) assert.equal(s.memory_peak_gb, null, file);
      else close(s.memory_peak_gb, want.mem, `${file} memory`);
      if ('power' in want) close(s.power_mean_w, want.power, `${file} power`);
      if ('p50' in want) close(s.duty_cycle_p50, want.p50, `${file} p50`, 1e-6);
      if ('span' in want) close(s.time_span_s, want.span, `${file} span`, 1e-6);
      if ('longestIdle' in want) close(s.longest_idle_s, want.longestIdle, `${file} longest idle`, 1e-6);
      if (want.source) assert.equal(s.duty_cycle_source[want.source], 1, file);
      // The benchmark gave neither duty cycle nor memory peak: both derived from telemetry.
      const got = await as('ana', 'GET', `/benchmarks/${b.json.id}`);
      assert.equal(got.json.gpu_duty_cycle, null, 'the benchmark itself is unchanged');
      if (want.duty !== null) close(got.json.derived.gpu_duty_cycle, want.duty, `${file} derived`);
      if (want.mem !== null) close(got.json.derived.memory_peak_gb, want.mem, `${file} derived mem`);
      const list = await as('ana', 'GET', `/benchmarks/${b.json.id}/telemetry`);
      assert.equal(list.json.items[0].id, r.json.id);
      assert.equal(list.json.items[0].summary.samples, want.samples);
    }
  });

  test('a duty cycle the benchmark gives is kept; several uploads add up; ?idle_below=', async () => {
    const b = await as('ana', 'POST', '/benchmarks', { body: { workload_id: train.id, offer_id: offer.id, measured_at: '2025-04-01T00:00:00Z', throughput_units_per_s: 100, gpu_duty_cycle: 0.9 } });
    const nesi = sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv');
    const r1 = await as('ana', 'POST', `/benchmarks/${b.json.id}/telemetry?idle_below=0.3`, text(nesi));
    assert.equal(r1.status, 201, r1.text);
    // utilization 0,0,28,32,30,26,0 → under 30 %: 0,0,28,26,0 = 5 of 7
    close(r1.json.summary.idle_fraction, 5 / 7, 'idle_below=0.3');
    assert.equal(r1.json.derived.gpu_duty_cycle, null, 'given, so not derived');
    close(r1.json.derived.memory_peak_gb, 80257 / 1024, 'memory peak derived');
    const r2 = await as('ana', 'POST', `/benchmarks/${b.json.id}/telemetry?format=dmon`, text(sample('nvidia-smi-dmon/deepspeech_issue178_dmon_s_pucvmet_4gpu_oldformat.txt')));
    assert.equal(r2.status, 201, r2.text);
    close(r2.json.derived.memory_peak_gb, 80257 / 1024, 'the peak over both uploads');
    assert.equal((await as('bob', 'POST', `/benchmarks/${b.json.id}/telemetry`, text(nesi))).status, 404);
    assert.equal((await as('ana', 'POST', `/benchmarks/${b.json.id}/telemetry?idle_below=2`, text(nesi))).status, 422);
  });

  test('idle report per benchmark and team from the summaries', async () => {
    const r = await as('ana', 'GET', '/reports/idle?team=vision');
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.benchmarks.length >= TELEMETRY.length);
    const [team] = r.json.teams;
    assert.equal(team.team, 'vision');
    assert.ok(team.idle_fraction >= 0 && team.idle_fraction <= 1);
    // the longest: the NeSI series under idle_below=0.3 (0 %, 0 %, 28 % from 07:04:28.836 to the
    // next busy sample at 07:04:43.843) = 15.007 s
    close(team.longest_idle_s, 15.007, 'longest idle stretch of the team', 1e-6);
    assert.deepEqual((await as('bob', 'GET', '/reports/idle')).json.teams, []);
  });
});

describe('load-test imports', () => {
  const imp = (format, extra = '') => `/benchmarks/import?format=${format}&workload_id=${serve.id}&offer_id=${offer.id}${extra}`;

  test('vLLM sweep (JSONL, "request_goodput:", request_rate "inf"): one configuration per benchmark', async () => {
    const file = 'vllm-bench/nerdalert_llmd_l40s_llama3.2-3b_rate-sweep_results.jsonl';
    const mixed = await as('ana', 'POST', imp('vllm'), text(sample(file), 'application/json'));
    assert.equal(mixed.status, 422, 'three deployments at the same rates cannot be one benchmark');
    assert.match(mixed.json.errors[0].message, /where=/);
    // Independent reading: JSON.parse each line, keep deployment=kvcache, take request_rate and
    // request_throughput; "inf" → offered = achieved.
    const rows = fs.readFileSync(path.join(SAMPLES, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((d) => d.deployment === 'kvcache');
    const r = await as('ana', 'POST', imp('vllm', '&where=deployment=kvcache&measured_at=2025-05-30T19:47:38Z'), text(sample(file), 'application/json'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.load_points.length, rows.length);
    assert.ok(r.json.flags.includes('saturated'));
    assert.equal(r.json.capacity_usable, true);
    assert.equal(r.json.measured_at, '2025-05-30T19:47:38+00:00');
    const expected = rows.map((d) => ({ offered: d.request_rate === 'inf' ? d.request_throughput : d.request_rate, achieved: d.request_throughput, ttft: d.p99_ttft_ms }))
      .sort((a, b) => a.offered - b.offered);
    r.json.load_points.forEach((p, i) => {
      close(p.offered_rps, expected[i].offered, 'offered');
      close(p.achieved_rps, expected[i].achieved, 'achieved');
      close(p.ttft_p99_ms, expected[i].ttft, 'ttft p99');
    });
    const u = await as('ana', 'GET', `/uploads/${r.json.upload_id}`);
    assert.equal(u.json.kind, 'benchmark_import');
  });

  test('vllm bench serve with one failed request: error rate 1/200', async () => {
    const r = await as('ana', 'POST', imp('vllm'), text(sample('vllm-bench/vllm_bench_serve_ascend_qwen2.5-vl-3b_rate1_failed1.json'), 'application/json'));
    assert.equal(r.status, 201, r.text);
    const [p] = r.json.load_points;
    close(p.offered_rps, 1, 'request_rate');
    close(p.achieved_rps, 0.9733236714351853, 'request_throughput');
    close(p.error_rate, 1 / 200, 'failed / (completed + failed)');
  });

  test('text a load test carries meets the rule of every text field: no control characters', async () => {
    // an escape sequence in model_id was stored and served back (a title-setting OSC, a bidi
    // override), where the same text in any field of POST /benchmarks is 422
    const doc = JSON.parse(sample('vllm-bench/vllm_bench_serve_ascend_qwen2.5-vl-3b_rate1_failed1.json').toString());
    for (const [field, value, cp] of [['model_id', 'q\u001b]0;pwned\u0007', 'U+001B'], ['backend', 'b\u009b2J', 'U+009B']]) {
      const r = await as('ana', 'POST', imp('vllm'), text(JSON.stringify({ ...doc, [field]: value }), 'application/json'));
      assert.equal(r.status, 422, r.text.slice(0, 300));
      assert.ok(r.json.errors.some((e) => e.pointer.endsWith(`/${field}`) && e.message.includes(cp)), r.text.slice(0, 600));
    }
  });

  test('GenAI-Perf CSV (quoted thousands) and JSON exports', async () => {
    const csv = await as('ana', 'POST', imp('genai-perf'), text(sample('genai-perf/cloudai_dynamo_llama3.1-405b_profile_export_genai_perf.csv')));
    assert.equal(csv.status, 201, csv.text);
    // "Request Throughput (per sec),1.50"; "Time To First Token (ms)" p99 "3,457.97"
    close(csv.json.load_points[0].achieved_rps, 1.5, 'request throughput');
    close(csv.json.load_points[0].ttft_p99_ms, 3457.97, 'quoted "3,457.97"');
    for (const [file, rps] of [['genai-perf/perf_analyzer_issue298_genai-perf_trtllm_c100_streaming.json', 17.222547659562533],
      ['genai-perf/perf_analyzer_issue298_genai-perf_trtllm_c100_nonstreaming.json', 21.621765653636075]]) {
      const r = await as('ana', 'POST', imp('genai-perf'), text(sample(file), 'application/json'));
      assert.equal(r.status, 201, r.text);
      close(r.json.load_points[0].achieved_rps, rps, `${file} request_throughput.avg`);
    }
  });

  test('MLPerf summaries: ns → ms, scheduled/completed samples per second; INVALID never capacity', async () => {
    // grep 'samples per second' FILE
    const figures = {
      'nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt': [101.25, 100.35],
      'amd_8xmi300x_llama2-70b-99_server_mlperf_log_summary.txt': [73.66, 71.74],
      'dell_xe9680_h200x8_resnet50_server_mlperf_log_summary.txt': [630239.5, 630225.9],
    };
    for (const [file, [offered, achieved]] of Object.entries(figures)) {
      const r = await as('ana', 'POST', imp('mlperf'), text(sample(`mlperf/${file}`), 'text/plain'));
      assert.equal(r.status, 201, `${file}: ${r.text}`);
      assert.equal(r.json.capacity_usable, true);
      close(r.json.load_points[0].offered_rps, offered, `${file} offered`);
      close(r.json.load_points[0].achieved_rps, achieved, `${file} achieved`);
    }
    // No INVALID summary was found published; this one is the NVIDIA file with its verdict
    // line changed, which is all loadgen changes in the summary for an invalid run.
    const invalid = sample('mlperf/nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt').toString().replace('Result is : VALID', 'Result is : INVALID');
    const r = await as('ana', 'POST', imp('mlperf'), text(invalid, 'text/plain'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.capacity_usable, false);
    assert.ok(r.json.flags.includes('mlperf_invalid'));
    assert.deepEqual(r.json.load_points, []);
    assert.equal(r.json.source.rejected_load_points.length, 1, 'kept for the record, not as capacity');
  });

  test('imports need an inference workload the caller may write', async () => {
    const body = text(sample('mlperf/amd_8xmi300x_llama2-70b-99_server_mlperf_log_summary.txt'), 'text/plain');
    const wrongKind = await as('ana', 'POST', `/benchmarks/import?format=mlperf&workload_id=${train.id}&offer_id=${offer.id}`, body);
    assert.equal(wrongKind.status, 422);
    assert.equal((await as('bob', 'POST', imp('mlperf'), body)).status, 422, 'not bob\'s workload');
    const missing = await as('ana', 'POST', '/benchmarks/import?format=mlperf', body);
    assert.deepEqual(missing.json.errors.map((e) => e.pointer).sort(), ['?offer_id', '?workload_id']);
  });
});
