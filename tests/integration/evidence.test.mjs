// Evidence resources end to end: workloads (validation, ETag/If-Match merge patch), offers
// (JSON and CSV price sheets), benchmarks (immutable, supersedes), Idempotency-Key, team
// scoping, list filters and cursors. Uploads of the real tool outputs are in
// evidence_uploads.test.mjs; the malformed-input corpus in evidence_malformed.test.mjs.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { evidenceServer, makeOffer, makeWorkload, text } from './evidence.lib.mjs';

let srv, as;
before(async () => ({ srv, as } = await evidenceServer()));
after(async () => { await srv?.stop(); });

const TRAINING = {
  team: 'vision', name: 'resnet50-imagenet', kind: 'training', class: 'production',
  model_parameters: 25.6e6, precision: 'bf16', memory_required_gb: 30, image_width_px: 224,
  image_height_px: 224, global_batch_size: 1024, batch_behaviour: 'fixed', dataset_gb: 150,
  dataset_location: 's3://datasets/imagenet', storage: 'object store, streamed', network: '100 Gb/s',
  expected_run_duration_s: 86400, checkpoint_gb: 0.3, checkpoint_interval_s: 3600, checkpoints_kept: 3,
  distributed_pattern: 'data_parallel', communication_gb_per_step: 0.1, target_units: 1.28e8,
  unit: 'images', target_quality: { metric: 'top1', target: 0.76, direction: 'at_least' },
};

describe('workloads', () => {
  test('a full profile round-trips with every field; ETag on GET', async () => {
    const w = await makeWorkload(as, 'ana', TRAINING);
    for (const [k, v] of Object.entries(TRAINING)) assert.deepEqual(w[k], v, k);
    assert.equal(w.version, 1);
    assert.equal(w.created_by, 'ana');
    const g = await as('ana', 'GET', `/workloads/${w.id}`);
    assert.equal(g.status, 200);
    assert.equal(g.headers.etag, '"v1"');
  });

  test('every bad field is named by its JSON Pointer; nothing is stored', async () => {
    const r = await as('ana', 'POST', '/workloads', {
      body: {
        team: 'vision', name: '', kind: 'pretraining', class: 'production', sequence_length: 2048.5,
        memory_required_gb: -1, precision: 'fp7', unit: 'Tokens!', bogus: 1, id: 'mine',
        target_quality: { metric: 'loss', target: 'low' }, dataset_gb: '800',
      },
    });
    assert.equal(r.status, 422, r.text);
    const pointers = r.json.errors.map((e) => e.pointer).sort();
    assert.deepEqual(pointers, ['/bogus', '/dataset_gb', '/id', '/kind', '/memory_required_gb', '/name',
      '/precision', '/sequence_length', '/target_quality/direction', '/target_quality/target', '/unit'].sort());
    const list = await as('ana', 'GET', '/workloads?kind=training');
    assert.ok(list.json.items.every((w) => w.name !== ''));
  });

  test('PATCH: If-Match missing → 428, stale → 412; merge patch with null clears; ETag moves on', async () => {
    const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'patch-me', kind: 'fine_tuning', class: 'exploratory', dataset_gb: 10 });
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const none = await as('ana', 'PATCH', `/workloads/${w.id}`, { body: { dataset_gb: 12 }, headers: merge });
    assert.equal(none.status, 428, none.text);
    const ok = await as('ana', 'PATCH', `/workloads/${w.id}`, { body: { dataset_gb: null, memory_required_gb: 40 }, headers: { ...merge, 'If-Match': '"v1"' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers.etag, '"v2"');
    assert.equal(ok.json.dataset_gb, null);
    assert.equal(ok.json.memory_required_gb, 40);
    assert.equal(ok.json.name, 'patch-me', 'fields not in the patch stay');
    const stale = await as('ana', 'PATCH', `/workloads/${w.id}`, { body: { memory_required_gb: 41 }, headers: { ...merge, 'If-Match': '"v1"' } });
    assert.equal(stale.status, 412, stale.text);
    const bad = await as('ana', 'PATCH', `/workloads/${w.id}`, { body: { kind: null, version: 9, extra: 1 }, headers: { ...merge, 'If-Match': '"v2"' } });
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(bad.json.errors.map((e) => e.pointer).sort(), ['/extra', '/version']);
    const g = await as('ana', 'GET', `/workloads/${w.id}`);
    assert.equal(g.json.memory_required_gb, 40, 'a refused patch changed nothing');
    assert.equal(g.json.version, 2);
  });

  test('team scoping: other teams get 404 on read and 403 on write; auditors read, never write', async () => {
    const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'private', kind: 'evaluation', class: 'exploratory' });
    assert.equal((await as('bob', 'GET', `/workloads/${w.id}`)).status, 404);
    assert.equal((await as('bob', 'PATCH', `/workloads/${w.id}`, { body: { name: 'x' }, headers: { 'If-Match': '"v1"' } })).status, 404);
    assert.ok(!(await as('bob', 'GET', '/workloads')).json.items.some((x) => x.id === w.id), 'not in bob\'s list');
    assert.equal((await as('bob', 'POST', '/workloads', { body: { team: 'vision', name: 'sneak', kind: 'training', class: 'production' } })).status, 403);
    assert.equal((await as('aud', 'GET', `/workloads/${w.id}`)).status, 200);
    assert.equal((await as('aud', 'POST', '/workloads', { body: { team: 'vision', name: 'audit', kind: 'training', class: 'production' } })).status, 403);
    assert.equal((await as('owner1', 'POST', '/workloads', { body: { team: 'nope', name: 'x', kind: 'training', class: 'production' } })).status, 422);
    const dup = await as('ana', 'POST', '/workloads', { body: { team: 'vision', name: 'private', kind: 'evaluation', class: 'exploratory' } });
    assert.equal(dup.status, 409, dup.text);
  });

  test('lists filter by team, kind and class and walk pages by cursor', async () => {
    for (let i = 0; i < 5; i++) await makeWorkload(as, 'bob', { team: 'nlp', name: `page-${i}`, kind: 'inference', class: 'production' });
    const seen = [];
    let cursor = null;
    do {
      const r = await as('owner1', 'GET', `/workloads?team=nlp&kind=inference&class=production&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.items.length <= 2);
      seen.push(...r.json.items.map((w) => w.name));
      cursor = r.json.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    assert.equal((await as('owner1', 'GET', '/workloads?kind=pretraining')).status, 422);
    assert.equal((await as('owner1', 'GET', '/workloads?cursor=nonsense')).status, 422);
  });
});

describe('offers', () => {
  test('a CSV price sheet becomes one offer per line (quoted cells, typed values, upload id)', async () => {
    const sheet = 'provider,region,instance_type,gpu_model,gpus_per_instance,gpu_memory_gb,purchase_option,price_per_hour,currency,interruption_rate_per_hour,available,term,reserved_utilization,name\n' +
      'aws,us-east-1,p5.48xlarge,H100-80GB,8,80,on_demand,98.32,USD,,true,none,,"p5, on demand"\n' +
      'aws,us-east-1,p4d.24xlarge,A100-40GB,8,40,spot,9.8,USD,0.15,yes,,,p4d spot\n' +
      'gcp,europe-west4,a3-highgpu-8g,H100-80GB,8,80,reserved,36,USD,,true,1y,0.45,a3 reserved\n';
    const r = await as('owner1', 'POST', '/offers', text(sheet));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.inserted, 3);
    assert.match(r.json.id, /^[0-9a-f-]{36}$/);
    const [p5, spot, reserved] = r.json.items;
    assert.equal(p5.name, 'p5, on demand');
    assert.equal(p5.price_per_hour, 98.32);
    assert.equal(p5.interruption_rate_per_hour, null, 'an empty cell is absent');
    assert.equal(spot.interruption_rate_per_hour, 0.15);
    assert.equal(spot.available, true);
    assert.equal(reserved.reserved_utilization, 0.45);
    assert.equal(reserved.term, '1y');
    for (const o of r.json.items) assert.equal(o.upload_id, r.json.id);
    const g = await as('bob', 'GET', `/offers/${spot.id}`);
    assert.equal(g.status, 200, 'everyone signed in reads the catalogue');
    const u = await as('owner1', 'GET', `/uploads/${r.json.id}`);
    assert.equal(u.json.kind, 'offers');
    assert.equal(u.json.inserted, 3);
  });

  test('a sheet with faults names each by line and column and stores nothing', async () => {
    const before = (await as('owner1', 'GET', '/offers?provider=badsheet')).json.items.length;
    const sheet = 'provider,region,instance_type,gpu_model,gpus_per_instance,gpu_memory_gb,purchase_option,price_per_hour,currency\n' +
      'badsheet,r,i,g,8,80,on_demand,1.5,USD\n' +
      'badsheet,r,i,g,8.5,80,cheap,-1,usd\n' +
      'badsheet,r,i,g,8,80\n';
    const r = await as('owner1', 'POST', '/offers', text(sheet));
    assert.equal(r.status, 422, r.text);
    const at = r.json.errors.map((e) => `${e.line}:${e.column ?? 0}:${e.pointer}`);
    assert.deepEqual(at, ['3:5:/gpus_per_instance', '3:7:/purchase_option', '3:8:/price_per_hour', '3:9:/currency', '4:7:']);
    assert.equal((await as('owner1', 'GET', '/offers?provider=badsheet')).json.items.length, before);
    const header = await as('owner1', 'POST', '/offers', text('provider;region;instance_type\naws;x;y\n'));
    assert.equal(header.status, 422);
    assert.equal(header.json.errors[0].line, 1);
    assert.equal(header.json.errors[0].column, 1);
  });

  test('owners and admins write the catalogue; team members and auditors do not', async () => {
    const body = { provider: 'p', region: 'r', instance_type: 'i', gpu_model: 'g', gpus_per_instance: 1, gpu_memory_gb: 24, purchase_option: 'spot', price_per_hour: 0.3, currency: 'EUR' };
    assert.equal((await as('admin', 'POST', '/offers', { body })).status, 201);
    assert.equal((await as('ana', 'POST', '/offers', { body })).status, 403);
    assert.equal((await as('aud', 'POST', '/offers', { body })).status, 403);
    const r = await as('owner1', 'POST', '/offers', { body: { ...body, purchase_option: 'on_demand', reserved_utilization: 0.5, term: '2 years' } });
    assert.equal(r.status, 422);
    assert.deepEqual(r.json.errors.map((e) => e.pointer).sort(), ['/reserved_utilization', '/term']);
  });
});

describe('benchmarks', () => {
  let training, inference, offer;
  before(async () => {
    training = await makeWorkload(as, 'ana', { team: 'vision', name: 'bench-train', kind: 'training', class: 'production', target_units: 1e9 });
    inference = await makeWorkload(as, 'ana', { team: 'vision', name: 'bench-serve', kind: 'inference', class: 'production' });
    offer = await makeOffer(as);
  });

  test('immutable: no update; a correction supersedes, both stay readable', async () => {
    const base = { workload_id: training.id, offer_id: offer.id, measured_at: '2025-03-01T10:00:00Z', throughput_units_per_s: 1200, gpu_duty_cycle: 0.62, input_stall_fraction: 0.2, repetitions: 3, setup_s: 900 };
    const a = await as('ana', 'POST', '/benchmarks', { body: base });
    assert.equal(a.status, 201, a.text);
    assert.equal(a.json.team, 'vision');
    assert.equal(a.json.ran_by, 'ana');
    assert.equal(a.json.outcome, 'succeeded');
    assert.equal((await as('ana', 'PATCH', `/benchmarks/${a.json.id}`, { body: {} })).status, 405);
    const b = await as('ana', 'POST', '/benchmarks', { body: { ...base, throughput_units_per_s: 1250, supersedes: a.json.id } });
    assert.equal(b.status, 201, b.text);
    const old = await as('ana', 'GET', `/benchmarks/${a.json.id}`);
    assert.equal(old.json.superseded_by, b.json.id);
    assert.equal(old.json.throughput_units_per_s, 1200, 'the old figures stay');
    const again = await as('ana', 'POST', '/benchmarks', { body: { ...base, supersedes: a.json.id } });
    assert.equal(again.status, 422, 'a benchmark is superseded once');
    assert.equal(again.json.errors[0].pointer, '/supersedes');
  });

  test('validation: ranges, outcome and reason, kind rules, load points', async () => {
    const r = await as('ana', 'POST', '/benchmarks', {
      body: { workload_id: training.id, offer_id: offer.id, measured_at: 'yesterday', gpu_duty_cycle: 1.2, failure_probability: 1, repetitions: 0 },
    });
    assert.equal(r.status, 422);
    assert.deepEqual(r.json.errors.map((e) => e.pointer).sort(), ['/failure_probability', '/gpu_duty_cycle', '/measured_at', '/repetitions']);
    const noThroughput = await as('ana', 'POST', '/benchmarks', { body: { workload_id: training.id, offer_id: offer.id, measured_at: '2025-03-01T10:00:00Z' } });
    assert.deepEqual(noThroughput.json.errors.map((e) => e.pointer), ['/throughput_units_per_s']);
    const failed = await as('ana', 'POST', '/benchmarks', { body: { workload_id: training.id, offer_id: offer.id, measured_at: '2025-03-01T10:00:00Z', outcome: 'failed' } });
    assert.deepEqual(failed.json.errors.map((e) => e.pointer), ['/failure_reason']);
    const ok = await as('ana', 'POST', '/benchmarks', { body: { workload_id: training.id, offer_id: offer.id, measured_at: '2025-03-01T10:00:00Z', outcome: 'failed', failure_reason: 'NCCL timeout at step 1200' } });
    assert.equal(ok.status, 201, ok.text);
    const dup = await as('ana', 'POST', '/benchmarks', {
      body: { workload_id: inference.id, offer_id: offer.id, measured_at: '2025-03-01T10:00:00Z',
        load_points: [{ offered_rps: 2, achieved_rps: 2, ttft_p99_ms: 140 }, { offered_rps: 2, achieved_rps: 1.9, ttft_p99_ms: 150, qps: 1 }] },
    });
    assert.equal(dup.status, 422);
    assert.deepEqual(dup.json.errors.map((e) => e.pointer), ['/load_points/1/qps']);
    const dup2 = await as('ana', 'POST', '/benchmarks', {
      body: { workload_id: inference.id, offer_id: offer.id, measured_at: '2025-03-01T10:00:00Z',
        load_points: [{ offered_rps: 2, achieved_rps: 2, ttft_p99_ms: 140 }, { offered_rps: 2, achieved_rps: 1.9, ttft_p99_ms: 150 }] },
    });
    assert.deepEqual(dup2.json.errors.map((e) => e.pointer), ['/load_points/1/offered_rps']);
    const other = await as('bob', 'POST', '/benchmarks', { body: { workload_id: training.id, offer_id: offer.id, measured_at: '2025-03-01T10:00:00Z', throughput_units_per_s: 1 } });
    assert.equal(other.status, 422, 'another team\'s workload does not exist for bob');
  });

  test('lists filter by workload, offer and outcome; another team sees none', async () => {
    const r = await as('ana', 'GET', `/benchmarks?workload=${training.id}&outcome=failed`);
    assert.equal(r.status, 200);
    assert.ok(r.json.items.length >= 1);
    assert.ok(r.json.items.every((b) => b.outcome === 'failed' && b.workload_id === training.id));
    const bob = await as('bob', 'GET', `/benchmarks?workload=${training.id}`);
    assert.deepEqual(bob.json.items, []);
    const one = r.json.items[0];
    assert.equal((await as('bob', 'GET', `/benchmarks/${one.id}`)).status, 404);
  });
});

describe('Idempotency-Key', () => {
  test('JSON: same key and body → the first reply again; another body → 409', async () => {
    const body = { team: 'vision', name: 'idem-1', kind: 'training', class: 'exploratory' };
    const h = { 'Idempotency-Key': 'wl-create-1' };
    const a = await as('ana', 'POST', '/workloads', { body, headers: h });
    assert.equal(a.status, 201);
    const b = await as('ana', 'POST', '/workloads', { body, headers: h });
    assert.equal(b.status, 201);
    assert.equal(b.headers['idempotency-replayed'], 'true');
    assert.equal(b.json.id, a.json.id, 'no second workload');
    const c = await as('ana', 'POST', '/workloads', { body: { ...body, name: 'idem-2' }, headers: h });
    assert.equal(c.status, 409);
    const d = await as('bob', 'POST', '/workloads', { body: { ...body, team: 'nlp' }, headers: h });
    assert.equal(d.status, 201, 'keys are per user');
  });

  test('a failed request releases its key; streamed uploads are covered too', async () => {
    const h = { 'Idempotency-Key': 'wl-bad' };
    const bad = await as('ana', 'POST', '/workloads', { body: { team: 'vision' }, headers: h });
    assert.equal(bad.status, 422);
    const good = await as('ana', 'POST', '/workloads', { body: { team: 'vision', name: 'after-422', kind: 'training', class: 'exploratory' }, headers: h });
    assert.equal(good.status, 201, 'the key was not kept for a refused request');
    const runs = JSON.stringify([{ external_id: 'idem-1', cluster: 'c1', team: 'vision', submitted_at: '2025-01-01T00:00:00Z', started_at: '2025-01-01T00:01:00Z', ended_at: '2025-01-01T01:00:00Z', gpus: 1, state: 'COMPLETED' }]);
    const k = { 'Idempotency-Key': 'runs-1' };
    const first = await as('ana', 'POST', '/runs', text(runs, 'application/json', k));
    assert.equal(first.status, 201, first.text);
    const second = await as('ana', 'POST', '/runs', text(runs, 'application/json', k));
    assert.equal(second.headers['idempotency-replayed'], 'true');
    assert.equal(second.json.id, first.json.id);
    assert.equal(second.json.inserted, 1, 'the first reply, not a duplicate count');
    const other = await as('ana', 'POST', '/runs', text(runs.replace('idem-1', 'idem-2'), 'application/json', k));
    assert.equal(other.status, 409);
    // The media type decides how the same bytes are read: another one is another request (it
    // replayed the stored 201 before; sent fresh as text/csv these bytes are a 422).
    const csv = await as('ana', 'POST', '/runs', text(runs, 'text/csv', k));
    assert.equal(csv.status, 409, csv.text);
    const sheet = 'provider,region,instance_type,gpu_model,gpus_per_instance,gpu_memory_gb,purchase_option,price_per_hour,currency\nidem,r,i,g,8,80,spot,1,USD\n';
    const s1 = await as('owner1', 'POST', '/offers', text(sheet, 'text/csv', { 'Idempotency-Key': 'sheet-1' }));
    const s2 = await as('owner1', 'POST', '/offers', text(sheet, 'text/csv', { 'Idempotency-Key': 'sheet-1' }));
    assert.equal(s2.json.id, s1.json.id);
    assert.equal((await as('owner1', 'GET', '/offers?provider=idem')).json.items.length, 1);
  });
});
