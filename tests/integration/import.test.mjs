// `capledger import KIND FILE`: the CLI that streams a tool's output file to a running server.
// Real samples from tests/data/samples are sent in place; the expected counts are the ones
// evidence_uploads.test.mjs works out independently (its awk commands), so this file checks
// what the command adds: the request it builds (path, query encoding, content type, length or
// chunked body, token, Idempotency-Key), and what it prints and exits with.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, freePort } from './lib/harness.mjs';
import { cli } from './lib/cli.mjs';
import { SAMPLES, evidenceServer, makeOffer, makeWorkload } from './evidence.lib.mjs';

let srv, as, tokens, serve, train, offer, dir;
before(async () => {
  ({ srv, as, tokens } = await evidenceServer());
  serve = await makeWorkload(as, 'ana', { team: 'vision', name: 'serve', kind: 'inference', class: 'production' });
  train = await makeWorkload(as, 'ana', { team: 'vision', name: 'train', kind: 'training', class: 'production' });
  offer = await makeOffer(as);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-import-'));
});
after(async () => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  await srv?.stop();
});

// Runs `capledger import ARGS` as `who` (token in CAPLEDGER_TOKEN unless env says otherwise)
// against the test server; json is the parsed stdout (null when it is not JSON).
function imp(args, { who = 'ana', input, env = {} } = {}) {
  const r = cli(srv, ['import', ...args], {
    input,
    env: { CAPLEDGER_URL: srv.url, CAPLEDGER_TOKEN: tokens[who], ...env },
  });
  let json = null;
  try { json = JSON.parse(r.stdout); } catch { /* not JSON */ }
  return { ...r, json };
}
const key = (stderr) => stderr.match(/Idempotency-Key: ([0-9a-f]{32})/)?.[1];

// The 32 fields of the Fox cluster's `sacct -aP --noheader -o …` (PROVENANCE.md).
const FOX_FIELDS = 'JobID,JobIDRaw,User,Account,State,Start,End,AveCPU,AveDiskRead,AveDiskWrite,AveRSS,AveVMSize,ElapsedRaw,ExitCode,Layout,MaxRSS,MaxVMSize,MinCPU,ReqCPUS,ReqMem,ReqNodes,Reservation,Submit,Suspended,SystemCPU,TimelimitRaw,UserCPU,NodeList,Partition,AllocTRES,Priority,JobName';
const FOX_GPU = path.join(SAMPLES, 'sacct/sonar_fox_sacct_aP_noheader_gpu.txt');

test('runs: a real sacct file, query parameters encoded (commas in fields=); again → duplicates', () => {
  const args = ['runs', FOX_GPU, '--param', 'cluster=c1', '--param', 'team=vision', '--param', `fields=${FOX_FIELDS}`];
  const r = imp(args);
  assert.equal(r.status, 0, r.stderr);
  // 59 finished jobs, 63 unfinished, 179 steps (the awk in evidence_uploads.test.mjs)
  assert.equal(r.json.inserted, 59, r.stdout);
  assert.equal(r.json.steps_skipped, 179);
  const first = key(r.stderr);
  assert.ok(first, `no Idempotency-Key on stderr: ${r.stderr}`);
  const again = imp(args);
  assert.equal(again.status, 0, again.stderr);
  assert.equal(again.json.inserted, 0);
  assert.equal(again.json.duplicates, 59);
  assert.notEqual(key(again.stderr), first, 'each run of the command draws a new key');
});

test('a bad token: exit 1, the 401 problem on stderr; no token at all is a usage error', async () => {
  const want = await api(srv.url, 'POST', '/api/v1/runs?cluster=c1', { token: 'bogus', body: 'x', headers: { 'content-type': 'text/csv' } });
  assert.equal(want.status, 401);
  const r = imp(['runs', FOX_GPU, '--param', 'cluster=c1'], { env: { CAPLEDGER_TOKEN: 'bogus' } });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /HTTP 401/);
  assert.ok(r.stderr.includes(want.json.detail), `401 detail '${want.json.detail}' missing from: ${r.stderr}`);
  assert.equal(r.json.status, 401, 'the problem document is on stdout');
  const none = imp(['runs', FOX_GPU], { env: { CAPLEDGER_TOKEN: undefined } });
  assert.equal(none.status, 2);
  assert.match(none.stderr, /CAPLEDGER_TOKEN/);
});

test('usage errors exit 2 before anything is sent', () => {
  for (const args of [
    ['telemetry', path.join(SAMPLES, 'nvidia-smi/nesi_a100_nounits_l5_timeseries.csv')],
    ['telemetry', '-', '--param', 'format=dmon'],
    ['sightings', FOX_GPU],
    ['runs'],
    ['runs', FOX_GPU, '--param', 'novalue'],
    ['runs', FOX_GPU, '--url', 'https://example.org'],
    ['runs', FOX_GPU, '--bogus'],
    ['runs', FOX_GPU, '--idempotency-key', 'has space'],
  ]) {
    const r = imp(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /Idempotency-Key:/, `${args.join(' ')} went as far as the request`);
  }
  const help = cli(srv, ['import', '--help']);
  assert.equal(help.status, 0);
  for (const kind of ['runs', 'runs-json', 'telemetry', 'loadtest', 'offers']) assert.match(help.stdout, new RegExp(`\\n  ${kind} `));
  assert.match(help.stdout, /plain http/);
});

test('a server that is not there: exit 1 naming the address', async () => {
  const port = await freePort();
  const r = imp(['runs', FOX_GPU, '--param', 'cluster=c1'], { env: { CAPLEDGER_URL: `http://127.0.0.1:${port}` } });
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`cannot connect to 127\\.0\\.0\\.1:${port}`));
});

test('a 422 lists each fault with its line and pointer on stderr', () => {
  // the galvani sample lacks Submit/Start/End: its header line names three missing columns
  const r = imp(['runs', path.join(SAMPLES, 'sacct/cluster_utils_issue87_sacct_parsable2.txt'), '--param', 'cluster=galvani']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /HTTP 422/);
  for (const p of ['/submitted_at', '/started_at', '/ended_at']) assert.match(r.stderr, new RegExp(`line 1 ${p}: `));
});

// A sacct text of n finished jobs, ~93 bytes a line.
function sacctLines(n, first = 1) {
  let s = 'JobIDRaw|State|Submit|Start|End|Account|AllocTRES\n';
  for (let i = first; i < first + n; i++) s += `${i}|COMPLETED|2025-02-01T10:00:00|2025-02-01T10:05:00|2025-02-01T11:05:00|vision|gres/gpu=1\n`;
  return s;
}

test('standard input goes chunked; rejected lines are listed on stderr; a retry with the key is replayed', async () => {
  const body = sacctLines(3) + '9|EXPLODED|2025-02-01T10:00:00|2025-02-01T10:05:00|2025-02-01T11:05:00|vision|\n';
  const r = imp(['runs', '-', '--param', 'cluster=stdin'], { input: body });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.json.inserted, 3);
  assert.match(r.stderr, /1 line\(s\) rejected:\n {2}line 5 (column \d+ )?\/state: /);
  const k = key(r.stderr);
  const retry = imp(['runs', '-', '--param', 'cluster=stdin', '--idempotency-key', k], { input: body });
  assert.equal(retry.status, 0, retry.stderr);
  assert.deepEqual(retry.json, r.json, 'the first reply again (inserted 3), not duplicates');
  assert.match(retry.stderr, /replayed/);
  const other = imp(['runs', '-', '--param', 'cluster=stdin', '--idempotency-key', k], { input: sacctLines(1, 100) });
  assert.equal(other.status, 1, 'the same key with another body is a conflict');
  assert.match(other.stderr, /HTTP 409/);
  const stored = await as('ana', 'GET', '/runs?cluster=stdin&limit=500');
  assert.equal(stored.json.items.length, 3);
});

test('many chunks: a 2.8 MB file (Content-Length) and the same through a pipe (chunked)', async () => {
  const n = 30_000;
  const file = path.join(dir, 'big.txt');
  fs.writeFileSync(file, sacctLines(n));
  assert.ok(fs.statSync(file).size > 32 * 64 * 1024, 'over 32 chunks of 64 KiB');
  const r = imp(['runs', file, '--param', 'cluster=big', '--param', 'team=vision']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.json.inserted, n);
  const piped = imp(['runs', '-', '--param', 'cluster=big2', '--param', 'team=vision'], { input: fs.readFileSync(file) });
  assert.equal(piped.status, 0, piped.stderr);
  assert.equal(piped.json.inserted, n);
});

test('runs-json: a JSON array file and JSON Lines on stdin, told apart by content', async () => {
  const run = (i) => ({ external_id: `rj${i}`, cluster: 'rj', team: 'vision', workload_class: 'production',
    submitted_at: '2025-03-01T00:00:00Z', started_at: '2025-03-01T00:10:00Z', ended_at: '2025-03-01T02:10:00Z', gpus: 1, state: 'COMPLETED' });
  const file = path.join(dir, 'runs.json');
  fs.writeFileSync(file, '  \n' + JSON.stringify([run(1), run(2)], null, 2));
  const a = imp(['runs-json', file, '--param', 'cluster=rj']);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(a.json.inserted, 2);
  const b = imp(['runs-json', '-'], { input: [run(2), run(3), run(4)].map((x) => JSON.stringify(x)).join('\n') + '\n' });
  assert.equal(b.status, 0, b.stderr);
  assert.equal(b.json.inserted, 2);
  assert.equal(b.json.duplicates, 1);
});

test('loadtest: vLLM outputs with format/workload/offer, where= encoded; token from --token-file', () => {
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, `${tokens.ana}\n`, { mode: 0o600 });
  const common = ['--param', 'format=vllm', '--param', `workload_id=${serve.id}`, '--param', `offer_id=${offer.id}`, '--token-file', tokenFile];
  const r = imp(['loadtest', path.join(SAMPLES, 'vllm-bench/vllm_bench_serve_ascend_qwen2.5-vl-3b_rate1_failed1.json'), ...common],
    { env: { CAPLEDGER_TOKEN: undefined } });
  assert.equal(r.status, 0, r.stderr);
  // one failed of 200 requests (evidence_uploads.test.mjs)
  assert.ok(Math.abs(r.json.load_points[0].error_rate - 1 / 200) < 1e-12, r.stdout);
  const sweep = path.join(SAMPLES, 'vllm-bench/nerdalert_llmd_l40s_llama3.2-3b_rate-sweep_results.jsonl');
  const kv = fs.readFileSync(sweep, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((d) => d.deployment === 'kvcache');
  const s = imp(['loadtest', sweep, ...common, '--param', 'where=deployment=kvcache', '--param', 'measured_at=2025-05-30T21:47:38+02:00'],
    { env: { CAPLEDGER_TOKEN: 'a wrong token the file must override' } });
  assert.equal(s.status, 0, s.stderr);
  assert.equal(s.json.load_points.length, kv.length);
  assert.equal(s.json.measured_at, '2025-05-30T19:47:38+00:00', 'the + of the offset arrived encoded');
});

test('telemetry: a real nvidia-smi CSV to the benchmark named by --param benchmark=', async () => {
  const b = await as('ana', 'POST', '/benchmarks', { body: { workload_id: train.id, offer_id: offer.id, measured_at: '2025-04-01T00:00:00Z', throughput_units_per_s: 100 } });
  assert.equal(b.status, 201, b.text);
  const r = imp(['telemetry', path.join(SAMPLES, 'nvidia-smi/nesi_a100_nounits_l5_timeseries.csv'), '--param', `benchmark=${b.json.id}`]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.json.format, 'nvidia-smi');
  assert.equal(r.json.samples, 7);
  const stored = await as('ana', 'GET', `/benchmarks/${b.json.id}/telemetry`);
  assert.equal(stored.status, 200, stored.text);
  const missing = imp(['telemetry', path.join(SAMPLES, 'nvidia-smi/nesi_a100_nounits_l5_timeseries.csv'), '--param', 'benchmark=no-such-benchmark']);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /HTTP 404/);
});

test('offers: a CSV price sheet as the owner; a team member is refused', async () => {
  const file = path.join(dir, 'sheet.csv');
  fs.writeFileSync(file, 'provider,region,instance_type,gpu_model,gpus_per_instance,gpu_memory_gb,purchase_option,price_per_hour,currency\n' +
    'sheetco,eu-north-1,g8,H100-80GB,8,80,on_demand,80.5,USD\nsheetco,eu-north-1,g8,H100-80GB,8,80,spot,31.25,USD\n');
  const r = imp(['offers', file], { who: 'owner1' });
  assert.equal(r.status, 0, r.stderr);
  const listed = (await as('owner1', 'GET', '/offers?provider=sheetco')).json.items;
  assert.deepEqual(listed.map((o) => o.price_per_hour).sort((x, y) => x - y), [31.25, 80.5]);
  const refused = imp(['offers', file], { who: 'ana' });
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /HTTP 403/);
});
