// Plausibility on every upload, with the real samples: telemetry of another GPU than the
// benchmark's offer is refused (422) unless ?force=true, which is recorded; MIG, impossible
// values, GenAI-Perf's output-length bug, MLPerf warnings and INVALID results, and runs left
// without a class come back as `warnings` in the reply and stay with the upload record.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

let srv, as, train, serve, a100_40, a100_80, h100, l40s;
before(async () => {
  ({ srv, as } = await evidenceServer());
  train = await makeWorkload(as, 'ana', { team: 'vision', name: 'train', kind: 'training', class: 'production' });
  serve = await makeWorkload(as, 'ana', { team: 'vision', name: 'serve', kind: 'inference', class: 'production' });
  a100_40 = await makeOffer(as, { provider: 'lambda', instance_type: 'gpu_8x_a100', gpu_model: 'A100', gpu_memory_gb: 40, price_per_hour: 10.32 });
  a100_80 = await makeOffer(as, { provider: 'lambda', instance_type: 'gpu_8x_a100_80gb_sxm4', gpu_model: 'A100-80GB', gpu_memory_gb: 80, price_per_hour: 14.32 });
  h100 = await makeOffer(as); // H100-80GB
  l40s = await makeOffer(as, { instance_type: 'g6e.xlarge', gpu_model: 'L40S', gpus_per_instance: 1, gpu_memory_gb: 48, price_per_hour: 1.86 });
});
after(async () => { await srv?.stop(); });

async function benchmark(offer) {
  const b = await as('ana', 'POST', '/benchmarks', {
    body: { workload_id: train.id, offer_id: offer.id, measured_at: '2025-04-01T00:00:00Z', throughput_units_per_s: 100 },
  });
  assert.equal(b.status, 201, b.text);
  return b.json;
}
const codes = (ws) => ws.map((w) => w.code).sort();

test('80 GB A100 telemetry on a 40 GB A100 offer: refused, nothing stored; forced, recorded', async () => {
  const b = await benchmark(a100_40);
  const nesi = sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv'); // 81920 MiB total, 80257 used
  const r = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry`, text(nesi));
  assert.equal(r.status, 422, r.text);
  assert.match(r.json.detail, /force=true/);
  const messages = r.json.errors.map((e) => e.message).join('\n');
  assert.match(messages, /^memory_mismatch: the GPUs report 80\.0 GiB of memory in total, but the benchmark's offer has 40 GB/m);
  assert.match(messages, /^memory_over_offer: the samples use up to 78\.4 GiB/m);
  assert.equal((await as('ana', 'GET', `/benchmarks/${b.id}/telemetry`)).json.items.length, 0, 'no upload record');
  assert.equal((await as('ana', 'GET', `/benchmarks/${b.id}`)).json.derived, null, 'the memory peak did not move');

  const forced = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry?force=true`, text(nesi));
  assert.equal(forced.status, 201, forced.text);
  assert.deepEqual(codes(forced.json.warnings), ['memory_mismatch', 'memory_over_offer']);
  assert.ok(forced.json.warnings.every((w) => w.refuses === true && w.overridden === true));
  const rec = await as('ana', 'GET', `/uploads/${forced.json.id}`);
  assert.equal(rec.status, 200, rec.text);
  assert.deepEqual(rec.json.warnings, forced.json.warnings, 'stored with the upload');
  assert.equal(rec.json.params.force, true);

  // the same file on its own GPU's offer: no warning at all
  const right = await as('ana', 'POST', `/benchmarks/${(await benchmark(a100_80)).id}/telemetry`, text(nesi));
  assert.equal(right.status, 201, right.text);
  assert.deepEqual(right.json.warnings, []);
});

test('a GTX 1080 Ti for an A100, an RTX 4000 Ada for an H100: refused by name', async () => {
  const gtx = await as('ana', 'POST', `/benchmarks/${(await benchmark(a100_80)).id}/telemetry`, text(sample('nvidia-smi/bpytop_issue26_2gpu_mixed_units.csv')));
  assert.equal(gtx.status, 422, gtx.text);
  const m = gtx.json.errors.map((e) => e.message).join('\n');
  assert.match(m, /gpu_model_mismatch: the telemetry is of a GeForce GTX 1080 Ti, but the benchmark's offer is a A100-80GB/);
  assert.match(m, /GeForce GTX 1060 6GB/);
  const ada = await as('ana', 'POST', `/benchmarks/${(await benchmark(h100)).id}/telemetry`, text(sample('dcgm/lke_rtx4000ada_k8s_podlabels_dcgm-exporter_metrics.prom'), 'text/plain'));
  assert.equal(ada.status, 422, ada.text);
  assert.match(ada.json.errors[0].message, /NVIDIA RTX 4000 Ada Generation.*H100-80GB/);
  // DCGM of an L40S on an L40S offer (45 GiB reported for "48 GB"): fits
  const ok = await as('ana', 'POST', `/benchmarks/${(await benchmark(l40s)).id}/telemetry`, text(sample('dcgm/upcloud_uks_l40s_dcgm-exporter_metrics.prom'), 'text/plain'));
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.warnings.filter((w) => w.refuses).length, 0, JSON.stringify(ok.json.warnings));
});

test('MIG: no duty cycle, and the reply says why', async () => {
  const r = await as('ana', 'POST', `/benchmarks/${(await benchmark(h100)).id}/telemetry`, text(sample('nvidia-smi/nvidia_gpu_exporter_h100-mig_590.48.01_load_query-gpu.csv')));
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.summary.duty_cycle_mean, null);
  assert.deepEqual(codes(r.json.warnings), ['mig']);
  assert.match(r.json.warnings[0].message, /MIG mode.*no duty cycle can be measured.*GPU_I_ID/s);
});

test('impossible values: utilisation over 100 % refused line by line, memory used over total flagged', async () => {
  const lines = sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv').toString().trimEnd().split('\n');
  lines[3] = lines[3].replace(', 28, 0, 80257, 81920', ', 128, 0, 80257, 81920');
  lines[5] = lines[5].replace(', 80257, 81920', ', 90000, 81920');
  const r = await as('ana', 'POST', `/benchmarks/${(await benchmark(a100_80)).id}/telemetry`, text(lines.join('\n') + '\n'));
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.rejected_total, 1);
  assert.equal(r.json.rejected[0].line, 4);
  assert.match(r.json.rejected[0].message, /utilization\.gpu: '128' is not a valid value/);
  assert.deepEqual(codes(r.json.warnings), ['memory_over_total']);
  assert.match(r.json.warnings[0].message, /^1 sample report/);
});

test('load tests: GenAI-Perf output 5× the requested length, MLPerf warnings and INVALID, stored with the upload', async () => {
  const imp = (format) => `/benchmarks/import?format=${format}&workload_id=${serve.id}&offer_id=${h100.id}`;
  const gp = await as('ana', 'POST', imp('genai-perf'), text(sample('genai-perf/perf_analyzer_issue298_genai-perf_trtllm_c100_streaming.json'), 'application/json'));
  assert.equal(gp.status, 201, gp.text);
  const osl = gp.json.warnings.find((w) => w.code === 'output_length');
  assert.ok(osl, JSON.stringify(gp.json.warnings));
  assert.match(osl.message, /2565\.\d+ tokens, 5\.1x the 500 requested/);
  const rec = await as('ana', 'GET', `/uploads/${gp.json.upload_id}`);
  assert.deepEqual(rec.json.warnings, gp.json.warnings);

  const dell = await as('ana', 'POST', imp('mlperf'), text(sample('mlperf/dell_xe9680_h200x8_resnet50_server_mlperf_log_summary.txt'), 'text/plain'));
  assert.equal(dell.status, 201, dell.text);
  assert.deepEqual(codes(dell.json.warnings), ['mlperf_warnings']);
  assert.match(dell.json.warnings[0].message, /loadgen reported 9 warnings/);
  const clean = await as('ana', 'POST', imp('mlperf'), text(sample('mlperf/nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt'), 'text/plain'));
  assert.deepEqual(clean.json.warnings, []);
  // No INVALID summary was found published: the NVIDIA one with its verdict changed.
  const invalid = sample('mlperf/nvidia_h200x8_llama2-70b-99_server_mlperf_log_summary.txt').toString().replace('Result is : VALID', 'Result is : INVALID');
  const inv = await as('ana', 'POST', imp('mlperf'), text(invalid, 'text/plain'));
  assert.equal(inv.status, 201, inv.text);
  assert.deepEqual(codes(inv.json.warnings), ['mlperf_invalid']);
  assert.equal(inv.json.capacity_usable, false);
});

test('runs left without a class: said in the reply and kept with the upload', async () => {
  const body = 'JobID|State|Submit|Start|End|AllocTRES|Partition\n9001|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:01:00|2025-01-01T01:00:00|gres/gpu=1|gpu\n';
  const r = await as('ana', 'POST', '/runs?cluster=nomap&team=vision', text(body));
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.classes, { unclassified: 1 });
  assert.deepEqual(codes(r.json.warnings), ['unclassified']);
  assert.match(r.json.warnings[0].message, /give \?class= \(--param class= with capledger import\), or map the partitions of cluster 'nomap'/);
  assert.deepEqual((await as('ana', 'GET', `/uploads/${r.json.id}`)).json.warnings, r.json.warnings);
  const classed = await as('ana', 'POST', '/runs?cluster=nomap2&team=vision&class=production', text(body));
  assert.deepEqual(classed.json.warnings, []);
});
