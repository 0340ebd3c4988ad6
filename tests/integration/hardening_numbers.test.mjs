// Hardening (issue 9): very large finite numbers. Every numeric input has a range; a value
// outside it is 422 naming the field (JSON Pointer, or line and column of an upload), and no
// arithmetic on input overflows into a 5xx.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { api, dataDir } from './lib/harness.mjs';
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

function invalidAt(r, where) {
  assert.equal(r.status, 422, r.text);
  assert.ok(r.json.errors.some((e) => (typeof where === 'string' ? e.pointer === where : e.line === where.line)),
            `no error at ${JSON.stringify(where)}: ${r.text}`);
}

describe('numbers beyond their range', () => {
  test('PATCH /workloads dataset_gb 1e20 is 422 at /dataset_gb', async () => {
    const got = await as('ana', 'GET', `/workloads/${train.id}`);
    const r = await as('ana', 'PATCH', `/workloads/${train.id}`, {
      body: '{"dataset_gb": 1e20}', headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': got.headers.etag },
    });
    invalidAt(r, '/dataset_gb');
    const again = await as('ana', 'PATCH', `/workloads/${train.id}`, {
      body: '{"dataset_gb": 2e15}', headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': got.headers.etag },
    });
    invalidAt(again, '/dataset_gb');
    assert.match(again.json.errors[0].message, /\[0, 1e\+15\]/);
  });

  test('an offer priced 1e308 is 422 at /price_per_hour (JSON and CSV)', async () => {
    const r = await as('owner1', 'POST', '/offers', {
      body: '{"provider":"aws","region":"r","instance_type":"i","gpu_model":"g","gpus_per_instance":8,"gpu_memory_gb":80,"purchase_option":"spot","price_per_hour":1e308,"currency":"USD"}',
      headers: { 'Content-Type': 'application/json' },
    });
    invalidAt(r, '/price_per_hour');
    const sheet = 'provider,region,instance_type,gpu_model,gpus_per_instance,gpu_memory_gb,purchase_option,price_per_hour,currency\naws,r,i,g,8,80,spot,1e308,USD\n';
    const c = await as('owner1', 'POST', '/offers', text(sheet));
    assert.equal(c.status, 422, c.text);
    assert.ok(c.json.errors.some((e) => e.line === 2 && e.column === 8), c.text);
  });

  test('a telemetry power of 2e23 W is 422 naming its line and column', async () => {
    const csv = 'timestamp, index, utilization.gpu [%], memory.used [MiB], power.draw [W]\n2025/01/01 00:00:00.000, 0, 50 %, 1000 MiB, 2e23 W\n';
    const r = await as('ana', 'POST', `/benchmarks/${bench.id}/telemetry`, text(csv));
    assert.equal(r.status, 422, r.text);
    const e = r.json.errors.find((x) => x.line === 2);
    assert.ok(e && e.column === 5, r.text);
  });

  test('two telemetry lines of 1e308 W are 422, not 503', async () => {
    const csv = 'timestamp, index, power.draw [W]\n2025/01/01 00:00:00.000, 0, 1e308 W\n2025/01/01 00:00:01.000, 0, 1e308 W\n';
    const r = await as('ana', 'POST', `/benchmarks/${bench.id}/telemetry`, text(csv));
    invalidAt(r, { line: 2 });
    invalidAt(r, { line: 3 });
  });

  test('a GenAI-Perf figure of 4e23 is 422, not 500', async () => {
    const genai = sample('genai-perf/cloudai_dynamo_llama3.1-405b_profile_export_genai_perf.csv').toString()
      .replace('"1,146.31"', '4e23');
    const r = await as('ana', 'POST', `/benchmarks/import?format=genai-perf&workload_id=${serve.id}&offer_id=${offer.id}`, text(genai));
    assert.equal(r.status, 422, r.text);
    assert.ok(r.json.errors.every((e) => e.line > 0 || e.pointer.length > 0), r.text);
  });

  test('any JSON number beyond ±(2^53 − 1) is 422 at its pointer, in any body', async () => {
    const r = await as('ana', 'POST', '/compare', {
      body: '{"workload":{"kind":"training","target_units":1e300},"options":[{"name":"a","offer":{"price_per_hour":1e308}}]}',
      headers: { 'Content-Type': 'application/json' },
    });
    invalidAt(r, '/options/0/offer/price_per_hour');
    invalidAt(r, '/workload/target_units');
    const anon = await api(srv.url, 'POST', '/api/v1/session', { body: '{"username":"a","password":-1e300}', headers: { 'Content-Type': 'application/json' } });
    invalidAt(anon, '/password');
  });

  test('a scenario at the largest values the engine takes computes finite figures', async () => {
    const example = JSON.parse(fs.readFileSync(path.join(dataDir, 'spec', 'example-training.json'), 'utf8'));
    const big = structuredClone(example);
    big.workload.target_units = 1e15;
    for (const o of big.options) o.offer.price_per_hour = 1e15;
    const r = await as('ana', 'POST', '/compare', { body: big });
    assert.ok(r.status === 200 || r.status === 422, r.text);
    if (r.status === 200) assert.ok(r.json.options.every((o) => Number.isFinite(o.expected_cost_per_outcome)), r.text);
    // Stored, the same figures (jsonb prints 1.2e22 as a 23-digit integer) read back fine.
    const sc = await as('ana', 'POST', '/scenarios', { body: { team: 'vision', name: 'huge', document: big } });
    assert.equal(sc.status, 201, sc.text);
    {
      const c = await as('ana', 'POST', `/scenarios/${sc.json.id}/comparisons`);
      assert.ok(c.status < 500, c.text);
      assert.equal(c.status, 201, c.text);
      const back = await as('ana', 'GET', `/comparisons/${c.json.sha256}`);
      assert.equal(back.status, 200, back.text);
    }
    const over = structuredClone(example);
    over.options[1].offer.price_per_hour = 2e15;
    invalidAt(await as('ana', 'POST', '/compare', { body: over }), '/options/1/offer/price_per_hour');
  });

  test('the server is still up and stored none of it', async () => {
    assert.equal(srv.exited, null);
    const t = await as('ana', 'GET', `/benchmarks/${bench.id}/telemetry`);
    assert.deepEqual(t.json.items, []);
  });
});
