// Memory per request, bounded whatever the route (issue 25, items 1 and 2). The hostile pass
// found: eight 16 MiB vLLM imports at once took an idle server to 2.6 GiB and it kept 2.5 GiB;
// a 32 MiB JSON runs array answered 422 and still added 670 MiB; 26 SkyPilot catalog imports
// of 260 KB took it from 45 MiB to 1.4 GiB (glibc's arena per thread kept what each freed).
// Each scenario runs against a fresh server and reads its resident set from /proc/PID/status:
// the peak (VmHWM, reset before the attack through /proc/PID/clear_refs) and what is left a
// moment after. Under AddressSanitizer (its allocator keeps freed memory in quarantine on
// purpose) the requests and their answers are checked, not the ceilings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { evidenceServer, makeOffer, makeWorkload, text } from './evidence.lib.mjs';

const MiB = 1024 * 1024;

function status(pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(s.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))[1]) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}
const sanitized = (pid) => /libasan|libubsan/.test(fs.readFileSync(`/proc/${pid}/maps`, 'utf8'));
const mib = (b) => `${(b / MiB).toFixed(1)} MiB`;

// Runs attack() against the server and returns {base, peak, after} (bytes of RSS) and its result.
async function measure(srv, attack) {
  await sleep(300);
  const base = status(srv.pid).rss;
  fs.writeFileSync(`/proc/${srv.pid}/clear_refs`, '5'); // VmHWM := VmRSS
  const result = await attack();
  const peak = status(srv.pid).hwm;
  await sleep(1500);
  const after = status(srv.pid).rss;
  return { base, peak, after, result };
}

function ceilings(srv, what, m, { peak, after }) {
  console.log(`${what}: base ${mib(m.base)}, peak ${mib(m.peak)}, after ${mib(m.after)}`);
  if (sanitized(srv.pid)) return;
  assert.ok(m.peak - m.base <= peak, `${what}: the peak grew by ${mib(m.peak - m.base)} (at most ${mib(peak)})`);
  assert.ok(m.after - m.base <= after, `${what}: ${mib(m.after - m.base)} kept after it (at most ${mib(after)})`);
}

// A vLLM result (the summary the reader takes) followed by per-request detail arrays of small
// numbers up to `bytes`: the shape whose parse costs most per byte.
function vllmBody(bytes) {
  const head = JSON.stringify({
    date: '20250301-120000', backend: 'vllm', model_id: 'm', num_prompts: 100, completed: 100, failed: 0,
    request_rate: 4, request_throughput: 3.9, duration: 25.6, mean_ttft_ms: 80, p99_ttft_ms: 150,
  }).slice(0, -1);
  const n = Math.floor((bytes - head.length - 20) / 2);
  return Buffer.from(`${head},"ttfts":[${'0,'.repeat(n - 1)}0]}`);
}

test('eight 16 MiB vLLM imports at once stay within the budget and give their memory back', async () => {
  const { srv, as } = await evidenceServer();
  try {
    const offer = await makeOffer(as, { instance_type: 'g6e.12xlarge', gpu_model: 'L40S', gpus_per_instance: 4, gpu_memory_gb: 48, price_per_hour: 10.49 });
    const wv = await makeWorkload(as, 'ana', { team: 'vision', name: 'serve', kind: 'inference', class: 'production' });
    const wn = await makeWorkload(as, 'bob', { team: 'nlp', name: 'serve', kind: 'inference', class: 'production' });
    const body = vllmBody(16 * MiB - 64);
    const who = ['ana', 'bob', 'owner1', 'ana', 'bob', 'owner1', 'ana', 'bob'];
    const m = await measure(srv, () => Promise.all(who.map((u) => {
      const w = u === 'bob' ? wn : wv;
      return as(u, 'POST', `/benchmarks/import?format=vllm&workload_id=${w.id}&offer_id=${offer.id}`,
        { body, headers: { 'Content-Type': 'application/json' }, timeoutMs: 120_000 });
    })));
    ceilings(srv, '8 × 16 MiB vLLM imports', m, { peak: 160 * MiB, after: 32 * MiB });
    // refused by the parse budget (422 naming the limit), or for want of an upload slot
    for (const r of m.result) {
      assert.ok([422, 429, 503].includes(r.status), `${r.status} ${r.text.slice(0, 300)}`);
      assert.match(r.headers['content-type'], /problem\+json/);
    }
    const refused = m.result.filter((r) => r.status === 422);
    assert.ok(refused.length >= 1, 'at least one was read and refused');
    for (const r of refused) assert.match(r.json.errors[0].message, /about \d+ MiB of memory; the limit is 64 MiB/, r.text);
    // A real import still goes in afterwards.
    const { sample } = await import('./evidence.lib.mjs');
    const ok = await as('ana', 'POST', `/benchmarks/import?format=vllm&workload_id=${wv.id}&offer_id=${offer.id}&where=deployment=kvcache`,
      { body: sample('vllm-bench/nerdalert_llmd_l40s_llama3.2-3b_rate-sweep_results.jsonl'), headers: { 'Content-Type': 'application/json' } });
    assert.equal(ok.status, 201, ok.text);
  } finally {
    await srv.stop();
  }
});

test('a 32 MiB JSON runs array is read one run at a time: memory near its size, not 20 times it', async () => {
  const { srv, as } = await evidenceServer();
  try {
    // empty objects: the most values per byte; every one is missing its fields (422)
    const n = Math.floor((32 * MiB - 2) / 3);
    const body = Buffer.from(`[${'{},'.repeat(n - 1)}{}]`);
    const m = await measure(srv, () => as('owner1', 'POST', '/runs?cluster=mem', { body, headers: { 'Content-Type': 'application/json' }, timeoutMs: 300_000 }));
    assert.equal(m.result.status, 422, m.result.text.slice(0, 300));
    assert.equal(m.result.json.lines, undefined); // a refusal, not an upload record
    assert.equal(m.result.json.error_count, n * 4); // external_id, submitted_at, ended_at, state
    ceilings(srv, '32 MiB JSON runs array', m, { peak: 128 * MiB, after: 48 * MiB });
    // and a valid array is still stored
    const runs = Array.from({ length: 3 }, (_, i) => ({ external_id: `j${i}`, submitted_at: '2025-03-01T10:00:00Z', ended_at: '2025-03-01T11:00:00Z', state: 'COMPLETED', team: 'vision', gpus: 1 }));
    const ok = await as('owner1', 'POST', '/runs?cluster=mem', { body: runs });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json.inserted, 3);
  } finally {
    await srv.stop();
  }
});

// A SkyPilot vms.csv of about 260 KB: GPU rows of distinct instance types and regions.
function catalog(seed) {
  const gpu = `"{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8.0, 'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360}"`;
  const lines = ['InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice'];
  for (let i = 0; lines.join('\n').length < 260_000; i++)
    lines.push(`gpu_8x_h100_${seed}_${i},H100,8.0,208.0,1800.0,${(20 + i / 100).toFixed(2)},region-${i % 40},${gpu},${(9 + i / 100).toFixed(2)}`);
  return lines.join('\n') + '\n';
}

test('26 SkyPilot catalog imports on many connections leave no arena per thread behind', async () => {
  const { srv, as } = await evidenceServer();
  try {
    const m = await measure(srv, async () => {
      const out = [];
      for (let batch = 0; batch < 26; batch += 2) {
        out.push(...await Promise.all([batch, batch + 1].map((i) =>
          as('owner1', 'POST', `/offers/import?format=skypilot&provider=p${i}`, { ...text(catalog(i)), timeoutMs: 120_000 }))));
      }
      return out;
    });
    for (const r of m.result) assert.equal(r.status, 201, r.text.slice(0, 300));
    ceilings(srv, '26 SkyPilot catalog imports', m, { peak: 192 * MiB, after: 48 * MiB });
  } finally {
    await srv.stop();
  }
});

// A second hostile pass: two ways around the parse budget. A JSON Lines runs upload parsed each
// line (up to 1 MiB) with no estimate and outside the budget: one line of `[{},{},…]` took 78
// MiB, four such uploads at once +306 MiB. And the estimate left out jansson's lexer, which
// copies the longest token into a buffer that doubles: four JSON runs arrays holding one 31 MiB
// string each (estimated 31 MiB apiece) took +335 MiB.
test('JSON Lines runs uploads and long strings are parsed within the budget', async () => {
  const { srv, as } = await evidenceServer();
  try {
    const line = `[${'{},'.repeat(349_000)}{}]\n`;
    const ndjson = Buffer.from(line.repeat(4));
    const who = ['ana', 'bob', 'ana', 'bob'];
    const m = await measure(srv, () => Promise.all(who.map((u) =>
      as(u, 'POST', '/runs?cluster=memlines', { ...text(ndjson, 'application/x-ndjson'), timeoutMs: 120_000 }))));
    ceilings(srv, '4 JSON Lines uploads of 1 MiB lines of {}', m, { peak: 96 * MiB, after: 32 * MiB });
    for (const r of m.result) {
      assert.ok([422, 429, 503].includes(r.status), `${r.status} ${r.text.slice(0, 300)}`);
      if (r.status === 422) assert.match(r.json.errors[0].message, /about \d+ MiB of memory; the limit is 64 MiB/, r.text.slice(0, 300));
    }
    assert.ok(m.result.some((r) => r.status === 422), 'at least one was read and refused');

    const long = Buffer.from(`[{"external_id":"${'a'.repeat(31 * MiB)}"}]`);
    const m2 = await measure(srv, () => Promise.all(who.map((u) =>
      as(u, 'POST', '/runs?cluster=memstr', { body: long, headers: { 'Content-Type': 'application/json' }, timeoutMs: 120_000 }))));
    ceilings(srv, '4 JSON runs arrays of one 31 MiB string', m2, { peak: 192 * MiB, after: 32 * MiB });
    for (const r of m2.result) assert.ok([413, 429, 503].includes(r.status), `${r.status} ${r.text.slice(0, 300)}`);
    // a run in JSON Lines still goes in
    const ok = await as('ana', 'POST', '/runs?cluster=memlines', text(`${JSON.stringify({ external_id: 'j1', submitted_at: '2025-03-01T10:00:00Z', ended_at: '2025-03-01T11:00:00Z', state: 'COMPLETED', team: 'vision', gpus: 1 })}\n`, 'application/x-ndjson'));
    assert.equal(ok.status, 201, ok.text);
  } finally {
    await srv.stop();
  }
});
