// SkyPilot price catalogs (vms.csv) imported as offers: on-demand and spot as separate offers,
// GPU memory from the Python-literal GpuInfo, GCP families whose GPU the machine type implies,
// CPU-only rows skipped and counted, zones of a region collapsed to its lowest price. A newer
// catalog adds new offer versions; a comparison stored before keeps the price it used. The
// expected offers are worked out here, in JavaScript, from the CSV files themselves.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDir, psql } from './lib/harness.mjs';
import { cli } from './lib/cli.mjs';
import { evidenceServer, text } from './evidence.lib.mjs';

const DIR = path.join(dataDir, 'samples', 'skypilot-catalog');
const LAMBDA = path.join(DIR, 'lambda_vms_v7_excerpt.csv');
const GCP = path.join(DIR, 'gcp_vms_v7_excerpt.csv');

// RFC 4180 cells of one line (quotes never span lines in these files).
function cells(line) {
  const out = [];
  let cur = '', q = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (q) {
      if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (c === '"') q = false; else cur += c;
    } else if (c === '"') q = true;
    else if (c === ',') { out.push(cur); cur = ''; } else cur += c;
  }
  out.push(cur);
  return out;
}
function rows(file) {
  const [head, ...lines] = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  const cols = cells(head);
  return lines.map((l) => Object.fromEntries(cells(l).map((v, i) => [cols[i], v])));
}
// GCP a2/a3 VMs leave AcceleratorName empty: the family names the GPU (PROVENANCE.md).
function gcpFamily(type) {
  const m = type.match(/^(a2-highgpu|a2-megagpu|a2-ultragpu|a3-highgpu|a3-edgegpu)-(\d+)g$/);
  if (!m) return null;
  const [model, gb] = { 'a2-highgpu': ['A100', 40], 'a2-megagpu': ['A100', 40], 'a2-ultragpu': ['A100-80GB', 80], 'a3-highgpu': ['H100', 80], 'a3-edgegpu': ['H100', 80] }[m[1]];
  return { model, gpus: Number(m[2]), gb };
}
// The offers a catalog should give, keyed "type|region|option" → {gpu_model, gpus, gb, price}.
function expectedOffers(file) {
  const want = new Map();
  let cpuOnly = 0;
  for (const r of rows(file)) {
    let model = r.AcceleratorName, gpus = Number(r.AcceleratorCount), gb = null;
    const mib = (r.GpuInfo || '').match(/'SizeInMiB': (\d+)/);
    if (mib) gb = Number(mib[1]) / 1024;
    if (!model) {
      const f = gcpFamily(r.InstanceType);
      if (!f) { cpuOnly++; continue; }
      ({ model, gpus, gb } = f);
    }
    for (const [option, cell] of [['on_demand', r.Price], ['spot', r.SpotPrice]]) {
      if (cell === '' || cell === undefined) continue;
      const k = `${r.InstanceType}|${r.Region}|${option}`;
      const price = Number(cell);
      const had = want.get(k);
      if (!had || price < had.price) want.set(k, { gpu_model: model, gpus, gb, price });
    }
  }
  return { want, cpuOnly };
}
const keyOf = (o) => `${o.instance_type}|${o.region}|${o.purchase_option}`;

let srv, as, tokens, dir;
before(async () => {
  ({ srv, as, tokens } = await evidenceServer());
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-skypilot-'));
});
after(async () => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  await srv?.stop();
});

async function listAll(query) {
  const items = [];
  let cursor = null;
  do {
    const r = await as('ana', 'GET', `/offers?limit=100${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(r.status, 200, r.text);
    items.push(...r.json.items);
    cursor = r.json.next_cursor;
  } while (cursor);
  return items;
}

function imp(args) {
  const r = cli(srv, ['import', ...args], { env: { CAPLEDGER_URL: srv.url, CAPLEDGER_TOKEN: tokens.owner1 } });
  let json = null;
  try { json = JSON.parse(r.stdout); } catch { /* not JSON */ }
  return { ...r, json };
}

function assertOffers(got, want, provider) {
  assert.equal(got.length, want.size, `${provider}: ${got.length} offers, want ${want.size}`);
  for (const o of got) {
    const w = want.get(keyOf(o));
    assert.ok(w, `unexpected ${keyOf(o)}`);
    assert.equal(o.provider, provider);
    assert.equal(o.gpu_model, w.gpu_model, keyOf(o));
    assert.equal(o.gpus_per_instance, w.gpus, keyOf(o));
    assert.equal(o.gpu_memory_gb, w.gb, keyOf(o));
    assert.equal(o.price_per_hour, w.price, keyOf(o));
    assert.equal(o.currency, 'USD');
    assert.equal(o.catalog, 'skypilot');
    assert.equal(o.version, 1);
  }
}

test('refusals: role, format, provider, media type and faulty lines (with line and column), nothing stored', async () => {
  const body = fs.readFileSync(LAMBDA, 'utf8');
  assert.equal((await as('ana', 'POST', '/offers/import?format=skypilot&provider=lambda', text(body))).status, 403);
  const noFormat = await as('owner1', 'POST', '/offers/import?provider=lambda', text(body));
  assert.equal(noFormat.status, 422, noFormat.text);
  assert.equal(noFormat.json.errors[0].pointer, '?format');
  const noProvider = await as('owner1', 'POST', '/offers/import?format=skypilot', text(body));
  assert.equal(noProvider.status, 422);
  assert.equal(noProvider.json.errors[0].pointer, '?provider');
  const badCur = await as('owner1', 'POST', '/offers/import?format=skypilot&provider=lambda&currency=usd', text(body));
  assert.equal(badCur.status, 422);
  assert.equal(badCur.json.errors[0].pointer, '?currency');
  const unknown = await as('owner1', 'POST', '/offers/import?format=skypilot&provider=lambda&region=x', text(body));
  assert.equal(unknown.status, 422, unknown.text);
  assert.match(unknown.text, /region/);
  assert.equal((await as('owner1', 'POST', '/offers/import?format=skypilot&provider=lambda', text(body, 'application/json'))).status, 415);
  // A copy with a bad price, a bad count and a broken GpuInfo: every fault named, nothing kept.
  const lines = body.trimEnd().split('\n');
  lines[2] = lines[2].replace(',4.4,', ',four,');
  lines[3] = lines[3].replace('A6000,4.0,', 'A6000,-4,');
  lines[5] = lines[5].replace("'Count': 1.0,", "'Count': __import__('os'),");
  const bad = await as('owner1', 'POST', '/offers/import?format=skypilot&provider=lambda', text(`${lines.join('\n')}\n`));
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(bad.json.errors.map((e) => [e.line, e.column]), [[3, 6], [4, 3], [6, 8]]);
  const header = await as('owner1', 'POST', '/offers/import?format=skypilot&provider=lambda', text('provider,region,price\nx,y,1\n'));
  assert.equal(header.status, 422);
  assert.equal(header.json.errors[0].line, 1);
  assert.equal((await listAll('&provider=lambda')).length, 0, 'nothing was stored');
});

let a100; // the Lambda 8× A100 us-east-1 on-demand offer, version 1
test('both excerpts through `capledger import offers FILE --format skypilot`: the expected offers', async () => {
  const lam = expectedOffers(LAMBDA);
  const r = imp(['offers', LAMBDA, '--format', 'skypilot']); // provider from the file name
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.json.provider, 'lambda');
  assert.equal(r.json.created, lam.want.size);
  assert.equal(r.json.updated, 0);
  assert.equal(r.json.unchanged, 0);
  assert.equal(r.json.skipped_cpu_only, lam.cpuOnly);
  assert.equal(r.json.skipped_cpu_only, 2);
  assert.equal(r.json.rows, rows(LAMBDA).length);
  assertOffers(await listAll('&provider=lambda'), lam.want, 'lambda');
  // Lambda sells no spot: no spot offer at all.
  assert.equal((await listAll('&provider=lambda&purchase_option=spot')).length, 0);

  const gcp = expectedOffers(GCP);
  const g = imp(['offers', GCP, '--format', 'skypilot']);
  assert.equal(g.status, 0, g.stderr);
  assert.equal(g.json.provider, 'gcp');
  assert.equal(g.json.created, gcp.want.size);
  assert.equal(g.json.skipped_cpu_only, 0);
  const got = await listAll('&provider=gcp');
  assertOffers(got, gcp.want, 'gcp');
  // Spot prices differ by region (PROVENANCE.md): a3-edgegpu-8g 2.17547 against 8.56847.
  const edge = got.filter((o) => o.instance_type === 'a3-edgegpu-8g' && o.purchase_option === 'spot');
  assert.deepEqual(edge.map((o) => [o.region, o.price_per_hour]).sort(), [['asia-northeast1', 8.56847], ['us-central1', 2.17547]]);
  const mega = got.find((o) => o.instance_type === 'a2-megagpu-16g' && o.purchase_option === 'on_demand');
  assert.deepEqual([mega.gpu_model, mega.gpus_per_instance, mega.gpu_memory_gb], ['A100', 16, 40]);

  // The same catalog again: all unchanged, nothing stored.
  const again = await as('owner1', 'POST', '/offers/import?format=skypilot&provider=lambda', text(fs.readFileSync(LAMBDA, 'utf8')));
  assert.equal(again.status, 200, again.text);
  assert.deepEqual([again.json.created, again.json.updated, again.json.unchanged, again.json.stored], [0, 0, lam.want.size, 0]);
  // The upload records say what each import stored.
  const rec1 = await as('owner1', 'GET', `/uploads/${r.json.id}`);
  assert.equal(rec1.status, 200, rec1.text);
  assert.deepEqual([rec1.json.kind, rec1.json.format, rec1.json.inserted, rec1.json.duplicates, rec1.json.skipped], ['offers', 'skypilot', lam.want.size, 0, 2]);
  assert.equal(rec1.json.summary.skipped_cpu_only, 2);
  const rec2 = await as('owner1', 'GET', `/uploads/${again.json.id}`);
  assert.deepEqual([rec2.json.inserted, rec2.json.duplicates], [0, lam.want.size]);
  a100 = (await listAll('&provider=lambda')).find((o) => o.instance_type === 'gpu_8x_a100' && o.region === 'us-east-1');
  assert.equal(a100.price_per_hour, 10.32);

  // A path that names no cloud needs --param provider=.
  const anon = path.join(dir, 'vms.csv');
  fs.copyFileSync(LAMBDA, anon);
  const r2 = imp(['offers', anon, '--format', 'skypilot']);
  assert.equal(r2.status, 2);
  assert.match(r2.stderr, /--param provider=/);
});

test('a newer catalog: new versions, the old ones kept; a comparison stored before keeps its price', async () => {
  assert.ok(a100, 'the import test ran');
  // A scenario citing the stored offer, and a comparison of it, before the price change.
  const doc = JSON.parse(fs.readFileSync(path.join(dataDir, 'spec', 'example-training.json'), 'utf8'));
  doc.options = doc.options.slice(0, 2);
  doc.options[0] = { ...doc.options[0], name: 'lambda-a100', offer: a100.id };
  const sc = await as('owner1', 'POST', '/scenarios', { body: { name: 'catalog versions', team: 'vision', document: doc } });
  assert.equal(sc.status, 201, sc.text);
  const before1 = await as('owner1', 'POST', `/scenarios/${sc.json.id}/comparisons`);
  assert.equal(before1.status, 201, before1.text);
  const priceIn = (cmp) => cmp.scenario.options[0].offer.price_per_hour; // the resolved scenario, stored
  const stored = await as('owner1', 'GET', `/comparisons/${before1.json.sha256}`);
  assert.equal(priceIn(stored.json), 10.32);

  // The newer catalog, written here: every A100 row 10% dearer, one row dropped.
  const lines = fs.readFileSync(LAMBDA, 'utf8').trimEnd().split('\n');
  const changed = lines.filter((l) => !l.startsWith('gpu_1x_gh200,')).map((l, i) => {
    if (i === 0 || !/^gpu_\d+x_a100,/.test(l)) return l;
    const c = cells(l);
    c[5] = String(Math.round(Number(c[5]) * 1.1 * 1e6) / 1e6);
    return c.map((v) => (v.includes(',') ? `"${v}"` : v)).join(',');
  });
  const nA100 = lines.filter((l) => /^gpu_\d+x_a100,/.test(l)).length;
  assert.equal(nA100, 8, '4 sizes × 2 regions');
  const newer = path.join(dir, 'lambda_vms_v8.csv');
  fs.writeFileSync(newer, `${changed.join('\n')}\n`);
  const r = imp(['offers', newer, '--format', 'skypilot']);
  assert.equal(r.status, 0, r.stderr);
  const total = expectedOffers(LAMBDA).want.size;
  assert.deepEqual([r.json.created, r.json.updated, r.json.unchanged], [0, nA100, total - 2 - nA100]);
  const up = r.json.items.find((i) => i.instance_type === 'gpu_8x_a100' && i.region === 'us-east-1');
  assert.equal(up.status, 'updated');
  assert.equal(up.version, 2);
  assert.equal(up.supersedes, a100.id);
  assert.equal(up.previous_price_per_hour, 10.32);
  assert.equal(up.price_per_hour, 11.352);

  // Lists show the current version; the old one is still readable by id and names its successor.
  const now = await listAll('&provider=lambda');
  assert.equal(now.length, total, 'one per key (the dropped row keeps its last version)');
  const cur = now.find((o) => o.instance_type === 'gpu_8x_a100' && o.region === 'us-east-1');
  assert.deepEqual([cur.id, cur.version, cur.price_per_hour], [up.id, 2, 11.352]);
  const old = await as('ana', 'GET', `/offers/${a100.id}`);
  assert.equal(old.status, 200);
  assert.deepEqual([old.json.price_per_hour, old.json.version, old.json.superseded_by], [10.32, 1, up.id]);
  assert.equal(psql(`SELECT count(*) FROM offer WHERE provider = 'lambda'`, { database: srv.db }), String(total + nA100));

  // The comparison stored before still shows the old price, and the scenario (which cites the
  // old id) recomputes to the same bytes.
  const after1 = await as('owner1', 'GET', `/comparisons/${before1.json.sha256}`);
  assert.equal(priceIn(after1.json), 10.32);
  const again = await as('owner1', 'POST', `/scenarios/${sc.json.id}/comparisons`);
  assert.equal(again.status, 200, again.text);
  assert.equal(again.json.sha256, before1.json.sha256);
  // A scenario citing the new version prices at the new price.
  doc.options[0].offer = up.id;
  const sc2 = await as('owner1', 'POST', '/scenarios', { body: { name: 'catalog versions v2', team: 'vision', document: doc } });
  const c2 = await as('owner1', 'POST', `/scenarios/${sc2.json.id}/comparisons`);
  assert.equal(c2.status, 201, c2.text);
  assert.equal(priceIn((await as('owner1', 'GET', `/comparisons/${c2.json.sha256}`)).json), 11.352);
  assert.notEqual(c2.json.sha256, before1.json.sha256);

  // Two imports of one more price change at once: one makes the versions, the other finds
  // them current (imports take one lock), so no key gets two versions 3.
  const third = changed.map((l) => l.replace(/^(gpu_8x_a100,.*?,)11\.352,/, '$112.5,')).join('\n');
  const moved = third.split('\n').filter((l, i) => l !== changed[i]).length;
  assert.equal(moved, 2, 'gpu_8x_a100 in both regions');
  const [x, y] = await Promise.all([0, 1].map(() =>
    as('owner1', 'POST', '/offers/import?format=skypilot&provider=lambda', text(`${third}\n`))));
  assert.deepEqual([x.status, y.status].sort(), [200, 201], `${x.text} ${y.text}`);
  assert.equal(x.json.updated + y.json.updated, moved);
  assert.equal(psql(`SELECT count(*) FROM offer WHERE provider = 'lambda' AND version = 3`, { database: srv.db }), String(moved));
});
