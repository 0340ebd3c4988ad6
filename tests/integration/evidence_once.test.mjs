// Evidence counted once: a telemetry sample is identified by (benchmark, GPU, timestamp), so the
// same nvidia-smi file sent again adds nothing and the derived figures stay where they were;
// every route refuses query parameters it does not take, naming them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';
import { bin } from './lib/cli.mjs';

let srv, as, tokens, train, offer;
const tokensOf = () => tokens;
before(async () => {
  ({ srv, as, tokens } = await evidenceServer());
  train = await makeWorkload(as, 'ana', { team: 'vision', name: 'train', kind: 'training', class: 'production' });
  offer = await makeOffer(as, { instance_type: 'gpu_8x_a100_80gb_sxm4', gpu_model: 'A100-80GB', price_per_hour: 14.32 });
});
after(async () => { await srv?.stop(); });

async function benchmark(fields = {}) {
  const b = await as('ana', 'POST', '/benchmarks', {
    body: { workload_id: train.id, offer_id: offer.id, measured_at: '2024-03-13T07:05:00Z', throughput_units_per_s: 100, ...fields },
  });
  assert.equal(b.status, 201, b.text);
  return b.json;
}

test('13 uploads of the same nvidia-smi file: 7 samples stored once, the duty cycle never moves', async () => {
  const b = await benchmark();
  const nesi = sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv');
  // utilization.gpu 0,0,28,32,30,26,0 → mean 116/700
  const first = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry`, text(nesi));
  assert.equal(first.status, 201, first.text);
  assert.equal(first.json.inserted, 7);
  assert.equal(first.json.duplicates, 0);
  assert.ok(Math.abs(first.json.derived.gpu_duty_cycle - 116 / 700) < 1e-12);
  assert.deepEqual(first.json.derived.telemetry_upload_ids, [first.json.id]);
  for (let i = 1; i < 13; i++) {
    const again = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry`, text(nesi));
    assert.equal(again.status, 201, again.text);
    assert.equal(again.json.samples, 7, 'the file still reads as 7 samples');
    assert.equal(again.json.inserted, 0);
    assert.equal(again.json.duplicates, 7);
    assert.deepEqual(again.json.derived, first.json.derived, `upload ${i + 1} moved the derived figures`);
  }
  const got = await as('ana', 'GET', `/benchmarks/${b.id}`);
  assert.ok(Math.abs(got.json.derived.gpu_duty_cycle - 116 / 700) < 1e-12);
  assert.deepEqual(got.json.derived.telemetry_upload_ids, [first.json.id], 'the figures name the upload they came from');
  const list = await as('ana', 'GET', `/benchmarks/${b.id}/telemetry?limit=50`);
  assert.equal(list.json.items.length, 13, 'every upload is recorded');
  assert.equal(list.json.items[12].duplicates, 7);
  // the idle report counts the stored samples, not the uploads
  const idle = await as('ana', 'GET', '/reports/idle');
  const row = idle.json.benchmarks.find((x) => x.benchmark_id === b.id);
  assert.ok(row, idle.text);
  assert.equal(row.samples, 7, idle.text);
});

test('overlapping exports add only the new samples; samples without a timestamp count once per file', async () => {
  const b = await benchmark();
  const nesi = sample('nvidia-smi/nesi_a100_nounits_l5_timeseries.csv').toString();
  const lines = nesi.trimEnd().split('\n');
  const head = [lines[0], ...lines.slice(1, 5)].join('\n') + '\n'; // samples 1-4
  const tail = [lines[0], ...lines.slice(3)].join('\n') + '\n'; // samples 3-7
  const a = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry`, text(head));
  assert.equal(a.json.inserted, 4, a.text);
  const c = await as('ana', 'POST', `/benchmarks/${b.id}/telemetry`, text(tail));
  assert.equal(c.json.inserted, 3, c.text);
  assert.equal(c.json.duplicates, 2);
  assert.ok(Math.abs(c.json.derived.gpu_duty_cycle - 116 / 700) < 1e-12, 'the same as the whole file');
  assert.deepEqual(c.json.derived.telemetry_upload_ids, [a.json.id, c.json.id]);

  // nvidia-smi dmon without -o DT prints no time: the same bytes again are duplicates
  const b2 = await benchmark();
  const dmon = sample('nvidia-smi-dmon/dmon_i0_misaligned_enc100.txt');
  const d1 = await as('ana', 'POST', `/benchmarks/${b2.id}/telemetry?format=dmon`, text(dmon, 'text/plain'));
  assert.equal(d1.json.inserted, 11, d1.text);
  const d2 = await as('ana', 'POST', `/benchmarks/${b2.id}/telemetry?format=dmon`, text(dmon, 'text/plain'));
  assert.equal(d2.json.inserted, 0, d2.text);
  assert.equal(d2.json.duplicates, 11);
  assert.deepEqual(d2.json.derived, d1.json.derived);
});

test('every route refuses a query parameter it does not take, naming it', async () => {
  const r = spawnSync(bin, ['routes'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const who = { owner: 'owner1', admin: 'admin', team: 'ana', auditor: 'aud' };
  const id = '00000000-0000-4000-8000-000000000000';
  for (const line of r.stdout.trim().split('\n')) {
    const [method, pattern, roles] = line.split(' ');
    const role = ['owner', 'admin', 'team', 'auditor'].find((x) => roles.split(',').includes(x));
    const path = pattern.replace(/\{[^}]+\}/g, id);
    const url = new URL(path.startsWith('/api/v1') ? path : path, srv.url);
    url.searchParams.set('limit', '5');
    url.searchParams.set('zz_misspelt', '1');
    const res = await fetch(url, {
      method,
      headers: { ...(role ? { Authorization: `Bearer ${tokensOf()[who[role]]}` } : {}), 'Content-Type': 'application/json' },
      body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
    });
    const body = await res.json().catch(() => null);
    assert.equal(res.status, 422, `${method} ${pattern}: ${res.status} ${JSON.stringify(body)}`);
    const pointers = body.errors.map((e) => e.pointer);
    assert.ok(pointers.includes('?zz_misspelt'), `${method} ${pattern}: ${JSON.stringify(body)}`);
    // limit is refused exactly where the route does not paginate
    assert.equal(pointers.includes('?limit'), !/limit/.test(spawnQuery(method, pattern)), `${method} ${pattern} limit`);
  }
});

test('a refused query value names its parameter, in the pointer and in the message, whatever its kind', async () => {
  const b = await benchmark();
  const rv = await as('owner1', 'POST', '/reviews', { body: { title: 'kinds', workload_ids: [train.id], started_on: '2026-01-05' } });
  assert.equal(rv.status, 201, rv.text);
  const body = 'JobID|State\n1|COMPLETED\n';
  for (const [who, method, path, pointer, message] of [
    ['owner1', 'GET', '/log/entries?start=x', '?start', 'query parameter start must be an integer from 0 to 9007199254740991'],
    ['owner1', 'GET', '/log/entries?start=0&end=-1', '?end', 'query parameter end must be an integer from 0 to 9007199254740991'],
    ['owner1', 'GET', '/log/proof/inclusion?index=%2B1', '?index', 'query parameter index must be an integer from 0 to 9007199254740991'],
    ['owner1', 'GET', '/decisions?review=nope', '?review', 'query parameter review must be an id (a UUID)'],
    ['owner1', 'GET', `/reviews/${rv.json.id}/checklist?comparison=${'A'.repeat(64)}`, '?comparison', 'query parameter comparison must be a SHA-256 (64 lower-case hex)'],
    ['owner1', 'GET', `/reports/usage?group_by=${'team,'.repeat(60)}`, '?group_by', 'query parameter group_by is too long: at most 255 bytes'],
    ['ana', 'GET', `/benchmarks/${b.id}/telemetry/series?points=1e2`, '?points', 'query parameter points must be an integer from 2 to 2000'],
    ['ana', 'GET', `/benchmarks/${b.id}/telemetry/series?idle_below=2`, '?idle_below', 'query parameter idle_below must be a number from 0.001 to 1'],
    ['ana', 'POST', '/runs?cluster=c7&team=vision&atomic=yes', '?atomic', 'query parameter atomic must be true or false'],
  ]) {
    const r = await as(who, method, path, method === 'POST' ? text(body) : undefined);
    assert.equal(r.status, 422, `${path}: ${r.text}`);
    assert.deepEqual(r.json.errors.map((e) => [e.pointer, e.message]), [[pointer, message]], path);
  }
});

test('a misspelt filter no longer widens a report; a refused upload stores nothing', async () => {
  const usage = await as('owner1', 'GET', '/reports/usage?teams=vision');
  assert.equal(usage.status, 422, usage.text);
  assert.equal(usage.json.errors[0].pointer, '?teams');
  assert.match(usage.json.errors[0].message, /takes group_by team from to offer_id cluster_offers/);
  const runs = await as('ana', 'GET', '/runs?clas=production');
  assert.equal(runs.status, 422);
  const body = 'JobID|State|Submit|Start|End|AllocTRES\n7001|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:01:00|2025-01-01T01:00:00|gres/gpu=1\n';
  const up = await as('ana', 'POST', '/runs?cluster=c9&team=vision&clsuter=c8', text(body));
  assert.equal(up.status, 422, up.text);
  assert.equal(up.json.errors[0].pointer, '?clsuter');
  const list = await as('ana', 'GET', '/runs?cluster=c9');
  assert.equal(list.json.items.length, 0, 'nothing stored');
  const ok = await as('ana', 'POST', '/runs?cluster=c9&team=vision', text(body));
  assert.equal(ok.status, 201, ok.text);
});

test('a parameter name percent-encoded or without a value is refused, never read as absent', async () => {
  // The name check decoded names while the reader matched them as written: ?at%6Fmic=true
  // passed the check and was then read as "no atomic", so a faulty upload was half stored, and
  // ?dry%5Frun=true turned a dry run into a real append (attack pass of 2026-12-05).
  const body = 'JobID|State|Submit|Start|End|AllocTRES\n' +
    '8001|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:01:00|2025-01-01T01:00:00|gres/gpu=1\n' +
    '8002|COMPLETED|not a time|2025-01-01T00:01:00|2025-01-01T01:00:00|gres/gpu=1\n';
  for (const [query, pointer, message] of [
    ['cluster=e1&team=vision&at%6Fmic=true', '?atomic', /written as is/],
    ['cluster=e1&team=vision&atomic', '?atomic', /has no value/],
    ['cluster=e1&te%61m=vision&atomic=true', '?team', /written as is/],
  ]) {
    const up = await as('ana', 'POST', `/runs?${query}`, text(body));
    assert.equal(up.status, 422, `${query}: ${up.text}`);
    assert.ok(up.json.errors.some((e) => e.pointer === pointer && message.test(e.message)), `${query}: ${up.text}`);
  }
  const list = await as('ana', 'GET', '/runs?cluster=e1');
  assert.equal(list.json.items.length, 0, 'nothing stored');
  const teams = await as('owner1', 'GET', '/teams?l%69mit=abc');
  assert.equal(teams.status, 422, teams.text);
  assert.equal(teams.json.errors[0].pointer, '?limit');
  const dry = await as('owner1', 'POST', '/decisions?dry%5Frun=true', { body: { record: {} } });
  assert.equal(dry.status, 422, dry.text);
  assert.ok(dry.json.errors.some((e) => e.pointer === '?dry_run'), dry.text);
});

test('a body in another charset than UTF-8 is refused (415), never read as UTF-8', async () => {
  // The second attack pass: text/plain; charset=utf-16 was stored as if it were UTF-8.
  const body = 'JobID|State|Submit|Start|End|AllocTRES\n' +
    '9001|COMPLETED|2025-01-01T00:00:00|2025-01-01T00:01:00|2025-01-01T01:00:00|gres/gpu=1\n';
  for (const type of ['text/plain; charset=utf-16', 'text/plain;charset=ISO-8859-1', 'text/plain , text/csv',
    'text/plain; charset = iso-8859-1', "text/plain; charset*=utf-16''", 'text/plain; x=1, text/csv', 'text/plain; charset']) {
    const r = await as('ana', 'POST', '/runs?cluster=cs1&team=vision', text(body, type));
    assert.equal(r.status, 415, `${type}: ${r.text}`);
    assert.ok(r.json.detail.includes(type.toLowerCase()), r.text);
  }
  const json = await as('ana', 'POST', '/workloads', { body: { team: 'vision', name: 'cs', kind: 'training', class: 'exploratory' }, headers: { 'Content-Type': 'application/json; charset=latin1' } });
  assert.equal(json.status, 415, json.text);
  assert.equal((await as('ana', 'GET', '/runs?cluster=cs1')).json.items.length, 0, 'nothing stored');
  // Two Content-Type headers: the first was read, a charset in the second unseen (third pass).
  const net = await import('node:net');
  const sock = net.connect(srv.port, '127.0.0.1');
  let raw = '';
  sock.on('data', (d) => { raw += d; });
  const closed = new Promise((resolve) => sock.once('close', resolve));
  sock.end(`POST /api/v1/runs?cluster=cs1&team=vision HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.ana}\r\n` +
           `Content-Type: text/plain\r\nContent-Type: text/plain; charset=utf-16\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
           `Connection: close\r\n\r\n${body}`);
  await closed;
  assert.match(raw, /^HTTP\/1\.1 400 /, raw.slice(0, 300));
  assert.match(raw, /Content-Type is given more than once/);
  for (const type of ['text/plain; charset="UTF-8"', 'text/plain;charset=us-ascii', 'TEXT/PLAIN', 'text/plain ; format=flowed']) {
    const r = await as('ana', 'POST', '/runs?cluster=cs1&team=vision', text(body, type));
    assert.equal(r.status, 201, `${type}: ${r.text}`);
  }
});

let routeQueries = null;
function spawnQuery(method, pattern) {
  routeQueries ??= Object.fromEntries(spawnSync(bin, ['routes', '--query'], { encoding: 'utf8' }).stdout.trim().split('\n')
    .map((l) => l.split(' ')).map(([m, p, , q]) => [`${m} ${p}`, q]));
  return routeQueries[`${method} ${pattern}`];
}
