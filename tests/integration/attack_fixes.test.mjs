// Findings of the adversarial pass of 2026-12-04 (issue 9's "no request may…"): each failed on
// the code before its fix.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceServer, makeOffer, makeWorkload } from './evidence.lib.mjs';

let env;
before(async () => { env = await evidenceServer(); });
after(async () => { await env?.srv.stop(); });

test('PATCH of a workload to a team the caller is not in names that team (it read freed memory)', async () => {
  const { as } = env;
  const w = await makeWorkload(as, 'bob', { team: 'nlp', name: 'tagger', kind: 'training', class: 'production' });
  for (let i = 0; i < 5; i++) {
    const r = await as('bob', 'PATCH', `/workloads/${w.id}`, {
      body: { team: 'vision' }, headers: { 'If-Match': '"v1"', 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(r.status, 403, r.text);
    assert.match(r.json.detail, /team 'vision'/, r.text);
  }
});

test('a shared review: a member sees no other team\'s evidence ids on artifacts and cannot rewrite them', async () => {
  const { as } = env;
  const offer = await makeOffer(as);
  const wv = await makeWorkload(as, 'ana', { team: 'vision', name: 'resnet', kind: 'training', class: 'production' });
  const wn = await makeWorkload(as, 'bob', { team: 'nlp', name: 'bert', kind: 'training', class: 'production' });
  const bench = async (who, w) => {
    const r = await as(who, 'POST', '/benchmarks', { body: { workload_id: w.id, offer_id: offer.id, measured_at: '2026-01-10T00:00:00Z', throughput_units_per_s: 100 } });
    assert.equal(r.status, 201, r.text);
    return r.json.id;
  };
  const bv = await bench('ana', wv);
  const bn = await bench('bob', wn);
  const rv = await as('owner1', 'POST', '/reviews', { body: { title: 'shared', workload_ids: [wv.id, wn.id], started_on: '2026-01-05' } });
  assert.equal(rv.status, 201, rv.text);
  const base = `/reviews/${rv.json.id}/artifacts`;
  const art = await as('ana', 'POST', base, { body: { title: 'vision profile', phase: 'evidence_plan', contributor: 'ana', evidence: [bv] } });
  assert.equal(art.status, 201, art.text);
  const mine = await as('bob', 'POST', base, { body: { title: 'nlp profile', phase: 'evidence_plan', contributor: 'bob', evidence: [bn] } });
  assert.equal(mine.status, 201, mine.text);

  const listed = await as('bob', 'GET', base);
  assert.equal(listed.status, 200, listed.text);
  assert.ok(!listed.text.includes(bv), `bob sees vision's benchmark id: ${listed.text}`);
  const seen = listed.json.items.find((a) => a.id === art.json.id);
  assert.deepEqual(seen.evidence, []);
  assert.equal(seen.evidence_hidden, 1);
  assert.deepEqual(listed.json.items.find((a) => a.id === mine.json.id).evidence, [bn]);
  const owner = await as('owner1', 'GET', base);
  assert.deepEqual(owner.json.items.find((a) => a.id === art.json.id).evidence, [bv], 'owners see everything');

  const deface = await as('bob', 'PATCH', `${base}/${art.json.id}`, {
    body: { title: 'defaced', evidence: [bn] }, headers: { 'If-Match': '"v1"', 'Content-Type': 'application/merge-patch+json' },
  });
  assert.equal(deface.status, 403, deface.text);
  const after = await as('ana', 'GET', base);
  const kept = after.json.items.find((a) => a.id === art.json.id);
  assert.equal(kept.title, 'vision profile');
  assert.deepEqual(kept.evidence, [bv]);
  const own = await as('ana', 'PATCH', `${base}/${art.json.id}`, {
    body: { status: 'done' }, headers: { 'If-Match': '"v1"', 'Content-Type': 'application/merge-patch+json' },
  });
  assert.equal(own.status, 200, own.text);
});

test('a query value longer than the route reads is refused, never read as absent (the filter was dropped)', async () => {
  const { as } = env;
  const long = '00000000-0000-0000-0000-000000000000' + 'x'.repeat(60);
  const d = await as('owner1', 'GET', `/decisions?review=${long}`);
  assert.equal(d.status, 422, d.text);
  assert.equal(d.json.errors[0].pointer, '?review');
  const g = await as('owner1', 'GET', `/reports/usage?group_by=${'team,'.repeat(400)}team`);
  assert.equal(g.status, 422, g.text);
  assert.ok(g.json.errors.some((e) => e.pointer === '?group_by' && /too long/.test(e.message)), g.text);
  const c = await as('owner1', 'GET', `/reports/usage?cluster_offers=${'c:00000000-0000-0000-0000-000000000000,'.repeat(120)}`);
  assert.equal(c.status, 422, c.text);
});

test('a query parameter given twice, or without a name, is refused (the first silently won)', async () => {
  const { as } = env;
  for (const q of ['team=vision&team=nlp', 'limit=1&limit=2', '=1', 'team=vision&=']) {
    const r = await as('owner1', 'GET', `/workloads?${q}`);
    assert.equal(r.status, 422, `${q}: ${r.text}`);
  }
  const twice = await as('owner1', 'GET', '/workloads?team=vision&team=nlp');
  assert.equal(twice.json.errors[0].pointer, '?team');
  assert.match(twice.json.errors[0].message, /more than once/);
  assert.equal((await as('owner1', 'GET', '/workloads?team=vision&limit=2')).status, 200);
});

test('a load-test import with a negative latency is refused like POST /benchmarks refuses it (it was stored)', async () => {
  const { as } = env;
  const { sample } = await import('./evidence.lib.mjs');
  const offer = await makeOffer(as, { instance_type: 'g6e.12xlarge', gpu_model: 'L40S', gpus_per_instance: 4, gpu_memory_gb: 48, price_per_hour: 10.49 });
  const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'serve', kind: 'inference', class: 'production' });
  const lines = sample('vllm-bench/nerdalert_llmd_l40s_llama3.2-3b_rate-sweep_results.jsonl').toString().trim().split('\n');
  const bad = lines.map((l) => { const o = JSON.parse(l); o.p99_ttft_ms = -5; return JSON.stringify(o); }).join('\n');
  const q = `format=vllm&workload_id=${w.id}&offer_id=${offer.id}&where=deployment=kvcache`;
  const r = await as('ana', 'POST', `/benchmarks/import?${q}`, { body: bad, headers: { 'Content-Type': 'application/json' } });
  if (r.status === 201) assert.fail(`stored: ${r.text.slice(0, 300)}`);
  assert.equal(r.status, 422, r.text);
  assert.ok(r.json.errors.some((e) => /\/load_points\/\d+\/ttft_p99_ms/.test(e.pointer)), r.text);
  const good = await as('ana', 'POST', `/benchmarks/import?${q}`, { body: lines.join('\n'), headers: { 'Content-Type': 'application/json' } });
  assert.equal(good.status, 201, good.text);
});
