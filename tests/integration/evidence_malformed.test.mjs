// The malformed-input corpus: truncated files, wrong delimiters, binary garbage, a 10 MB
// single line, invalid UTF-8, wrong content types and empty bodies, sent to every importer.
// Each must be refused with a 4xx that says where the fault is (a line, or a JSON Pointer /
// query parameter), never a 5xx, and must store nothing; the server must stay up.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

let srv, as, serve, train, offer, bench;
before(async () => {
  ({ srv, as } = await evidenceServer());
  serve = await makeWorkload(as, 'ana', { team: 'vision', name: 'serve', kind: 'inference', class: 'production' });
  train = await makeWorkload(as, 'ana', { team: 'vision', name: 'train', kind: 'training', class: 'production' });
  offer = await makeOffer(as);
  const b = await as('ana', 'POST', '/benchmarks', { body: { workload_id: train.id, offer_id: offer.id, measured_at: '2025-01-01T00:00:00Z', throughput_units_per_s: 10 } });
  assert.equal(b.status, 201, b.text);
  bench = b.json;
});
after(async () => { await srv?.stop(); });

const half = (buf) => buf.subarray(0, Math.floor(buf.length / 2));
// Deterministic garbage: random bytes with no newline, seeded by a fixed buffer length.
const garbage = Buffer.from(randomBytes(4096).map((b) => (b === 10 ? 11 : b)));
const tenMegLine = Buffer.alloc(10 * 1024 * 1024, 'x');
const SACCT_HEADER = 'JobIDRaw|State|Submit|Start|End|Account\n';
const badUtf8 = Buffer.concat([Buffer.from(SACCT_HEADER + '1|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|vi'), Buffer.from([0xc3, 0x28]), Buffer.from('sion\n')]);

// Where a fault is named: a line, a JSON Pointer into the body or a query parameter.
// (A JSON body's root is the pointer "": allowed when json is set.)
function assertPlaced(r, what, { json = false } = {}) {
  assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  if (r.status !== 422) return;
  assert.ok(Array.isArray(r.json?.errors) && r.json.errors.length > 0, `${what}: no errors listed`);
  for (const e of r.json.errors)
    assert.ok(e.line > 0 || (typeof e.pointer === 'string' && (e.pointer.length > 0 || json)), `${what}: unplaced ${JSON.stringify(e)}`);
}

// Faults confined to some lines are refused whole only with ?atomic=true (without it the good
// lines are kept and the bad ones listed: tested below and in evidence_uploads.test.mjs), so
// those cases are sent atomic.
describe('job accounting uploads', () => {
  const cases = [
    ['truncated sacct (the last line cut), atomic', () => ({ ...text(half(Buffer.from(SACCT_HEADER + '1|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|vision\n'.repeat(3)))), q: '&atomic=true' })],
    ['truncated inside the header', () => text(SACCT_HEADER.slice(0, 12))],
    ['comma-delimited instead of |', () => text('JobIDRaw,State,Submit,Start,End\n1,COMPLETED,2025-01-01T00:00:00,2025-01-01T00:00:00,2025-01-01T01:00:00\n')],
    ['binary garbage', () => text(garbage)],
    ['a 10 MB single line', () => text(tenMegLine)],
    ['invalid UTF-8 in a line', () => text(badUtf8)],
    ['a NUL byte', () => text(Buffer.from(SACCT_HEADER + '1|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|vis\0ion\n'))],
    ['a bad line among good ones, atomic', () => ({ ...text(Buffer.concat([Buffer.from(SACCT_HEADER + '2|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|vision\n'), badUtf8.subarray(SACCT_HEADER.length)])), q: '&atomic=true' })],
    ['an empty body', () => text('')],
    ['only a header', () => text(SACCT_HEADER)],
    ['JSON that is not an array of runs', () => ({ ...text('{"runs": []}', 'application/json'), json: true })],
    ['truncated JSON', () => ({ ...text('[{"external_id": "1", "state": "COMPL', 'application/json'), json: true })],
    ['JSON Lines with garbage', () => text(garbage, 'application/x-ndjson')],
  ];
  for (const [name, req] of cases) {
    test(name, async () => {
      const { q = '', json = false, ...opts } = req();
      const r = await as('ana', 'POST', `/runs?cluster=bad&team=vision${q}`, opts);
      assertPlaced(r, name, { json });
      if (r.status === 201) assert.fail(`${name}: accepted`);
    });
  }

  test('the truncated line is named, the whole lines before it kept', async () => {
    const body = SACCT_HEADER + '11|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|vision\n12|COMPLETED|2025-01-01T00:00:00|2025-01-0';
    const r = await as('ana', 'POST', '/runs?cluster=trunc', text(body));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.inserted, 1);
    assert.equal(r.json.rejected[0].line, 3);
  });

  test('a 10 MB line among good lines is skipped with its line number', async () => {
    const good = '21|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:00:00|2025-01-01T01:00:00|vision\n';
    const r = await as('ana', 'POST', '/runs?cluster=long', text(Buffer.concat([Buffer.from(SACCT_HEADER + good), tenMegLine, Buffer.from('\n' + good.replace('21', '22'))])));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.inserted, 2);
    assert.deepEqual(r.json.rejected.map((e) => e.line), [3]);
  });

  test('wrong content types are 415', async () => {
    for (const type of ['image/png', 'application/xml', 'multipart/form-data']) {
      const r = await as('ana', 'POST', '/runs?cluster=ct', text(sample('sacct/sonar_fox_sacct_aP_noheader_2024.txt'), type));
      assert.equal(r.status, 415, type);
    }
    const none = await as('ana', 'POST', '/runs?cluster=ct', { body: Buffer.from('x') });
    assert.equal(none.status, 415);
  });

  test('nothing of the refused uploads was stored', async () => {
    const r = await as('owner1', 'GET', '/runs?cluster=bad');
    assert.deepEqual(r.json.items, []);
  });
});

describe('telemetry uploads', () => {
  const nesi = sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv');
  const cases = [
    ['truncated nvidia-smi CSV (cut inside the header)', () => text(nesi.subarray(0, 40))],
    ['semicolons instead of commas', () => text(nesi.toString().replaceAll(', ', ';'))],
    ['binary garbage', () => text(garbage)],
    ['a 10 MB single line', () => text(tenMegLine)],
    ['invalid UTF-8 in one line, atomic', () => ({ ...text(Buffer.concat([nesi.subarray(0, 100), Buffer.from([0xff, 0xfe]), nesi.subarray(100)])), path: '?atomic=true' })],
    ['invalid UTF-8 in the header', () => text(Buffer.concat([nesi.subarray(0, 20), Buffer.from([0xff, 0xfe]), nesi.subarray(20)]))],
    ['an empty body', () => text('')],
    ['dmon header only', () => text('# gpu   pwr  temp    sm\n# Idx     W     C     %\n', 'text/plain')],
    ['DCGM with a broken sample line', () => text('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1" 35\n', 'text/plain')],
    ['a format that does not match', () => ({ ...text(nesi), path: '?format=dcgm' })],
  ];
  for (const [name, req] of cases) {
    test(name, async () => {
      const { path = '', ...opts } = req();
      const r = await as('ana', 'POST', `/benchmarks/${bench.id}/telemetry${path}`, opts);
      assertPlaced(r, name);
      assert.notEqual(r.status, 201, `${name}: accepted ${r.text.slice(0, 200)}`);
    });
  }

  test('wrong content type is 415; nothing was stored', async () => {
    assert.equal((await as('ana', 'POST', `/benchmarks/${bench.id}/telemetry`, text(nesi, 'application/json'))).status, 415);
    const list = await as('ana', 'GET', `/benchmarks/${bench.id}/telemetry`);
    assert.deepEqual(list.json.items, []);
  });
});

describe('price sheets and load-test imports', () => {
  const sheetHeader = 'provider,region,instance_type,gpu_model,gpus_per_instance,gpu_memory_gb,purchase_option,price_per_hour,currency\n';
  const sheetCases = [
    ['truncated sheet (inside a quoted cell)', () => text(sheetHeader + 'aws,"us-east')],
    ['semicolon-delimited sheet', () => text(sheetHeader.replaceAll(',', ';') + 'aws;r;i;g;8;80;spot;1;USD\n')],
    ['binary garbage', () => text(garbage)],
    ['a 10 MB single line', () => text(tenMegLine)],
    ['invalid UTF-8', () => text(Buffer.concat([Buffer.from(sheetHeader + 'aws,r,i,'), Buffer.from([0xe2, 0x82]), Buffer.from(',8,80,spot,1,USD\n')]))],
    ['an empty body', () => text('')],
    ['wrong content type', () => text(sheetHeader, 'application/vnd.ms-excel')],
  ];
  for (const [name, req] of sheetCases) {
    test(`offers: ${name}`, async () => assertPlaced(await as('owner1', 'POST', '/offers', req()), name));
  }

  const imp = (format) => `/benchmarks/import?format=${format}&workload_id=${serve.id}&offer_id=${offer.id}`;
  const vllm = sample('vllm-bench/vllm_bench_serve_ascend_qwen2.5-vl-3b_rate1_failed1.json');
  const mlperf = sample('mlperf/amd_8xmi300x_llama2-70b-99_server_mlperf_log_summary.txt');
  const genai = sample('genai-perf/cloudai_dynamo_llama3.1-405b_profile_export_genai_perf.csv');
  const importCases = [
    ['vllm: truncated JSON', 'vllm', () => text(half(vllm), 'application/json')],
    ['vllm: binary garbage', 'vllm', () => text(garbage, 'application/json')],
    ['vllm: a 10 MB single line', 'vllm', () => text(tenMegLine, 'application/json')],
    ['vllm: invalid UTF-8', 'vllm', () => text(Buffer.concat([vllm.subarray(0, 30), Buffer.from([0xc0, 0x80]), vllm.subarray(30)]), 'application/json')],
    ['vllm: an empty body', 'vllm', () => text('', 'application/json')],
    ['vllm: JSON of another shape', 'vllm', () => text('{"results": []}', 'application/json')],
    ['genai-perf: truncated', 'genai-perf', () => text(genai.subarray(0, 60))],
    ['genai-perf: semicolons', 'genai-perf', () => text(genai.toString().replaceAll(',', ';'))],
    ['mlperf: truncated before its results', 'mlperf', () => text(mlperf.subarray(0, 120), 'text/plain')],
    ['mlperf: binary garbage', 'mlperf', () => text(garbage, 'text/plain')],
    ['mlperf: wrong content type', 'mlperf', () => text(mlperf, 'image/png')],
    ['an unknown format', 'locust', () => text(mlperf, 'text/plain')],
  ];
  for (const [name, format, req] of importCases) {
    test(`imports: ${name}`, async () => {
      const r = await as('ana', 'POST', imp(format), req());
      assertPlaced(r, name, { json: format === 'vllm' });
      assert.notEqual(r.status, 201, name);
    });
  }

  test('nothing was imported, and the server is still healthy', async () => {
    const b = await as('ana', 'GET', `/benchmarks?workload=${serve.id}`);
    assert.deepEqual(b.json.items, []);
    const health = await fetch(`${srv.url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(srv.exited, null, 'the server did not crash');
  });
});
