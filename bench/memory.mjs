// Server memory under the worst request of each body-taking route, alone and 16 at once: the
// figures of README "Limits". Starts its own server (the test harness: CAPLEDGER_TEST_* as for
// the integration tests, CAPLEDGER_BIN the binary) and reads /proc/PID/status: VmHWM (the
// peak, reset through /proc/PID/clear_refs before each case) and VmRSS a second and a half
// after. Usage: node bench/memory.mjs [case-name-substring]
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { evidenceServer, makeOffer, makeWorkload, text } from '../tests/integration/evidence.lib.mjs';

const MiB = 1024 * 1024;
const mib = (b) => (b / MiB).toFixed(0);
const proc = (pid) => {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (n) => Number(s.match(new RegExp(`^${n}:\\s+(\\d+) kB`, 'm'))[1]) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
};

const { srv, as } = await evidenceServer();
const offer = await makeOffer(as, { instance_type: 'g6e.12xlarge', gpu_model: 'L40S', gpus_per_instance: 4, gpu_memory_gb: 48, price_per_hour: 10.49 });
const wl = {
  ana: await makeWorkload(as, 'ana', { team: 'vision', name: 'serve', kind: 'inference', class: 'production' }),
  bob: await makeWorkload(as, 'bob', { team: 'nlp', name: 'serve', kind: 'inference', class: 'production' }),
};
wl.owner1 = wl.ana;
const who = ['ana', 'bob', 'owner1'];

function vllm(bytes, item) {
  const head = JSON.stringify({ backend: 'vllm', model_id: 'm', num_prompts: 100, completed: 100, failed: 0, request_rate: 4, request_throughput: 3.9, duration: 25.6, p99_ttft_ms: 150 }).slice(0, -1);
  const n = Math.floor((bytes - head.length - 20) / (item.length + 1));
  return Buffer.from(`${head},"itls":[${`${item},`.repeat(n - 1)}${item}]}`);
}
function fill(bytes, item, open = '[', close = ']') {
  const n = Math.floor((bytes - 2) / (item.length + 1));
  return Buffer.from(`${open}${`${item},`.repeat(n - 1)}${item}${close}`);
}
function runsArray(bytes) {
  const out = [];
  let size = 2;
  for (let i = 0; size < bytes - 300; i++) {
    const s = JSON.stringify({ external_id: `m${i}`, submitted_at: '2025-03-01T10:00:00Z', started_at: '2025-03-01T10:01:00Z', ended_at: '2025-03-01T11:00:00Z', state: 'COMPLETED', team: 'vision', gpus: 8, gpu_model: 'H100', partition: 'gpu' });
    out.push(s);
    size += s.length + 1;
  }
  return `[${out.join(',')}]`;
}
function offersArray(bytes) {
  const out = [];
  let size = 2;
  for (let i = 0; size < bytes - 1000; i++) {
    const s = JSON.stringify({ name: `offer ${i} ${'x'.repeat(180)}`, provider: `p${i % 50}`, region: `r-${i}`, instance_type: `t-${i}-${'y'.repeat(80)}`, gpu_model: 'H100', gpus_per_instance: 8, gpu_memory_gb: 80, purchase_option: 'on_demand', price_per_hour: 20 + i / 1000, currency: 'USD', interruption_rate_per_hour: 0, provisioning_delay_s: 60 });
    if (out.length >= 10000) break;
    out.push(s);
    size += s.length + 1;
  }
  return `[${out.join(',')}]`;
}
function catalog(bytes, seed) {
  const gpu = `"{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360}"`;
  const lines = ['InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice'];
  let size = lines[0].length;
  for (let i = 0; size < bytes; i++) {
    const l = `gpu_8x_h100_${seed}_${i},H100,8.0,208.0,1800.0,${(20 + i / 100).toFixed(2)},region-${i % 40},${gpu},${(9 + i / 100).toFixed(2)}`;
    lines.push(l);
    size += l.length + 1;
  }
  return lines.join('\n') + '\n';
}

let seq = 0;
const json = (body) => ({ body, headers: { 'Content-Type': 'application/json' }, timeoutMs: 600_000 });
const cases = [
  ['POST /benchmarks/import, 16 MiB vLLM output with detail arrays of 1.1 million doubles (parsed within the budget, 201)', (u) => as(u, 'POST', `/benchmarks/import?format=vllm&workload_id=${wl[u].id}&offer_id=${offer.id}`, json(vllm(16 * MiB - 64, '0.01234567891234')))],
  ['POST /benchmarks/import, 16 MiB vLLM output of small integers (refused by the parse budget, 422)', (u) => as(u, 'POST', `/benchmarks/import?format=vllm&workload_id=${wl[u].id}&offer_id=${offer.id}`, json(vllm(16 * MiB - 64, '0')))],
  ['POST /runs, 32 MiB JSON array of {} (422)', (u) => as(u, 'POST', '/runs?cluster=mem', json(fill(32 * MiB, '{}')))],
  ['POST /runs, 32 MiB JSON array of runs (201)', (u) => as(u, 'POST', `/runs?cluster=mem${seq++}`, json(runsArray(31 * MiB).replaceAll('"m', `"${seq}m`)))],
  ['POST /offers, an 8 MiB JSON array of 10,000 offers (201)', (u) => as(u === 'owner1' ? 'owner1' : 'owner1', 'POST', '/offers', json(offersArray(8 * MiB).replaceAll('"r-', `"r${seq++}-`)))],
  ['POST /offers/import, a 2.5 MB SkyPilot catalog of 10,000 rows (201)', () => as('owner1', 'POST', `/offers/import?format=skypilot&provider=p${seq++}`, { ...text(catalog(2.5e6, seq)), timeoutMs: 600_000 })],
  ['POST /workloads (any JSON route), 1 MiB of [[],[],…] (parsed, 422)', (u) => as(u, 'POST', '/workloads', json(fill(1 * MiB - 16, '[]')))],
];

const only = process.argv[2];
console.log('| request | alone: peak / after (MiB above idle) | 16 at once: peak / after | statuses of the 16 |');
console.log('| --- | --- | --- | --- |');
for (const [name, send] of cases) {
  if (only && !name.includes(only)) continue;
  const row = [];
  let statuses = '';
  for (const n of [1, 16]) {
    await sleep(500);
    const base = proc(srv.pid).rss;
    fs.writeFileSync(`/proc/${srv.pid}/clear_refs`, '5');
    const rs = await Promise.all(Array.from({ length: n }, (_, i) => send(who[i % who.length])));
    const peak = proc(srv.pid).hwm;
    await sleep(1500);
    const after = proc(srv.pid).rss;
    row.push(`+${mib(peak - base)} / +${mib(Math.max(0, after - base))} (idle ${mib(base)})`);
    const count = {};
    for (const r of rs) count[r.status] = (count[r.status] || 0) + 1;
    statuses = Object.entries(count).map(([s, c]) => `${c}× ${s}`).join(', ');
  }
  console.log(`| ${name} | ${row[0]} | ${row[1]} | ${statuses} |`);
}
await srv.stop();
