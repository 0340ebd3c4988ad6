// Helpers for the ledger and review tests: users with Ed25519 signing keys (node:crypto), RFC
// 8785 canonical JSON and decision signatures computed here in JavaScript, the RFC 9162 Merkle
// checks recomputed with node:crypto's SHA-256, a second server process on the same database,
// and a set of stored evidence (workload, offers, benchmarks, runs, scenario, comparison)
// complete enough to cover the whole checklist.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, freePort, projectDir, withDatabase } from './lib/harness.mjs';
import { bin, cli, mintToken } from './lib/cli.mjs';

// ---- canonical JSON and signatures ---------------------------------------------------------

// RFC 8785 for what decision records hold (strings, integers, booleans, null, arrays,
// objects): JSON.stringify already writes ECMAScript strings and numbers, and the default sort
// compares UTF-16 code units, which is JCS's key order.
export function jcs(v) {
  if (typeof v === 'symbol') throw new Error('a record to sign names its supersedes: resolve SUPERSEDE_CURRENT first (postDecision does)');
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;
}

export const sha256hex = (buf) => crypto.createHash('sha256').update(buf).digest('hex');

export function signRecord(key, record) {
  const msg = Buffer.concat([Buffer.from('capledger-decision-v1\n'), Buffer.from(jcs(record))]);
  return crypto.sign(null, msg, key.privateKey).toString('base64');
}

export function newKeyPair() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKeyB64: raw.toString('base64'), keyId: sha256hex(raw) };
}

// ---- users ---------------------------------------------------------------------------------

// A user made with `capledger user add` and an API token for it.
export function addUser(srv, name, role, teams = []) {
  const args = ['user', 'add', name, '--role', role];
  for (const t of teams) args.push('--team', t);
  const password = `pw-${name}-${crypto.randomBytes(6).toString('hex')}`;
  const r = cli(srv, args, { input: `${password}\n` });
  if (r.status !== 0) throw new Error(`user add ${name} failed: ${r.stderr}`);
  return { name, password, token: mintToken(srv, name) };
}

// An owner with a registered signing key (enrolling needs the password again: docs/auth.md).
export async function addOwner(srv, name) {
  const owner = { ...addUser(srv, name, 'owner'), ...newKeyPair() };
  const r = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { token: owner.token, body: { public_key: owner.publicKeyB64, password: owner.password } });
  if (r.status !== 200 && r.status !== 201) throw new Error(`signing key: ${r.status} ${r.text}`);
  if (r.json.key_id !== owner.keyId) throw new Error(`key id ${r.json.key_id}, expected ${owner.keyId}`);
  return owner;
}

// ---- decisions -----------------------------------------------------------------------------

// A review has one current decision and a new one must supersede it (409 otherwise). Unless a
// test names `supersedes` itself, record() marks it SUPERSEDE_CURRENT and postDecision looks the
// review's current decision up (null for the first) before signing.
export const SUPERSEDE_CURRENT = Symbol('the review\'s current decision');

export function record(owner, reviewId, fields = {}) {
  return {
    id: crypto.randomUUID(),
    review_id: reviewId,
    decision: 'revise',
    chosen_option: null,
    comparison_sha256: [],
    evidence: [],
    question: 'Which capacity arrangement produces the lowest reliable cost per completed experiment?',
    baseline: 'current on-premises cluster',
    assumptions: ['failure probability 0.08 per attempt'],
    unresolved_questions: [],
    residual_exposure: 'spot interruption rates may rise',
    expected_operating_cost: { amount: '128450.00', currency: 'USD', period: 'quarter' },
    next_authority_boundary: 'spend above 200000.00 USD per quarter',
    owner: owner.name,
    accepted_by: 'platform-lead',
    justification: null,
    supersedes: SUPERSEDE_CURRENT,
    created_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    signer_key_id: owner.keyId,
    ...fields,
  };
}

// The review's current decision (the one nothing supersedes), or null.
export async function currentDecision(url, token, reviewId) {
  let cursor = null;
  let current = null;
  do {
    const q = new URLSearchParams({ review: reviewId, limit: '500', ...(cursor ? { cursor } : {}) });
    const r = await api(url, 'GET', `/api/v1/decisions?${q}`, { token });
    if (r.status !== 200) return null;
    current = r.json.items.find((d) => d.superseded_by === null)?.id ?? current;
    cursor = r.json.next_cursor;
  } while (cursor);
  return current;
}

// Resolves SUPERSEDE_CURRENT in rec (in place, so a re-post sends the same record).
export async function postDecision(url, owner, rec, { signer = owner, token = owner.token } = {}) {
  if (rec.supersedes === SUPERSEDE_CURRENT) rec.supersedes = await currentDecision(url, token, rec.review_id);
  return api(url, 'POST', '/api/v1/decisions', { token, body: { record: rec, signature: signRecord(signer, rec) } });
}

// ---- RFC 9162 in JavaScript ----------------------------------------------------------------

const sha = (...parts) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
export const leafHash = (leaf) => sha(Buffer.from([0]), leaf);
export const nodeHash = (l, r) => sha(Buffer.from([1]), l, r);

export function merkleRoot(hashes) {
  if (hashes.length === 0) return sha(Buffer.alloc(0));
  if (hashes.length === 1) return hashes[0];
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return nodeHash(merkleRoot(hashes.slice(0, k)), merkleRoot(hashes.slice(k)));
}

// RFC 9162 §2.1.3.2.
export function verifyInclusion(index, size, leaf, proof, root) {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

// RFC 9162 §2.1.4.2.
export function verifyConsistency(size1, size2, root1, root2, proof) {
  if (size1 === size2) return proof.length === 0 && root1.equals(root2);
  if (size1 === 0 || size1 > size2 || proof.length === 0) return false;
  let path = proof;
  if ((size1 & (size1 - 1)) === 0) path = [root1, ...proof];
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (fn % 2 === 1) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(root1) && sr.equals(root2);
}

// {origin, size, root (Buffer)} of a checkpoint note, checked against the verifier key text
// (name+hexid+base64(0x01 ‖ key)) with node:crypto — independently of capledger's own code.
export function openCheckpoint(note, verifierKey) {
  // The base64 part may itself hold '+': split at the first two only.
  const [name, idHex] = verifierKey.split('+', 2);
  const keyB64 = verifierKey.slice(name.length + idHex.length + 2);
  const keyBytes = Buffer.from(keyB64, 'base64');
  if (keyBytes[0] !== 1 || keyBytes.length !== 33) throw new Error('not an Ed25519 verifier key');
  const sep = note.indexOf('\n\n');
  const text = note.slice(0, sep + 1);
  const sigLine = note.slice(sep + 2).split('\n').find((l) => l.startsWith(`— ${name} `));
  const sig = Buffer.from(sigLine.split(' ')[2], 'base64');
  if (sig.subarray(0, 4).toString('hex') !== idHex) throw new Error('key id mismatch');
  const pub = crypto.createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), keyBytes.subarray(1)]),
    format: 'der', type: 'spki',
  });
  if (!crypto.verify(null, Buffer.from(text), pub, sig.subarray(4))) throw new Error('checkpoint signature does not verify');
  const [origin, size, root] = text.split('\n');
  return { origin, size: Number(size), root: Buffer.from(root, 'base64') };
}

// A checkpoint signed with the server's own key file (the 32-byte seed in hex): what an
// attacker holding the key — or the old server code — could produce.
export function signWithServerKey(keyFile, origin, size, root) {
  const seed = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'hex');
  const priv = crypto.createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const pub = crypto.createPublicKey(priv).export({ format: 'der', type: 'spki' }).subarray(-32);
  const body = `${origin}\n${size}\n${root.toString('base64')}\n`;
  const keyId = crypto.createHash('sha256').update(Buffer.concat([Buffer.from(`${origin}\n`), Buffer.from([1]), pub])).digest().subarray(0, 4);
  return `${body}\n\u2014 ${origin} ${Buffer.concat([keyId, crypto.sign(null, Buffer.from(body), priv)]).toString('base64')}\n`;
}

// ---- capledger verify ----------------------------------------------------------------------

// `capledger verify BUNDLE --key KEY`: key is the verifier key text the auditor holds (GET
// /api/v1/log/key fetched beforehand), null to give none.
export function verifyBundle(bundle, key, extraArgs = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-bundle-'));
  const file = path.join(dir, 'bundle.json');
  fs.writeFileSync(file, typeof bundle === 'string' ? bundle : JSON.stringify(bundle));
  const keyArgs = [];
  if (key !== null) {
    if (typeof key !== 'string') throw new Error('verifyBundle: the verifier key text, or null');
    fs.writeFileSync(path.join(dir, 'server.vkey'), key);
    keyArgs.push('--key', path.join(dir, 'server.vkey'));
  }
  const r = spawnSync(bin, ['verify', file, ...keyArgs, ...extraArgs], { encoding: 'utf8', timeout: 120_000 });
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

// ---- a second server on the same database --------------------------------------------------

export async function startTwin(srv) {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-twin-'));
  const logFd = fs.openSync(path.join(dir, 'server.log'), 'a');
  const child = spawn(bin, ['serve'], {
    cwd: projectDir,
    env: {
      ...process.env,
      CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, srv.db),
      CAPLEDGER_LISTEN: `127.0.0.1:${port}`,
      CAPLEDGER_STATIC_DIR: path.join(projectDir, 'static'),
      CAPLEDGER_KEY_FILE: srv.keyFile,
    },
    stdio: ['ignore', logFd, logFd],
  });
  fs.closeSync(logFd);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const log = () => fs.readFileSync(path.join(dir, 'server.log'), 'utf8');
  for (let i = 0; ; i++) {
    try {
      if ((await api(url, 'GET', '/healthz', { timeoutMs: 1000 })).status === 200) break;
    } catch { /* not up yet */ }
    if (i > 200) { child.kill('SIGKILL'); throw new Error(`twin did not start:\n${log()}`); }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url, log, exited,
    stop: async () => { child.kill('SIGTERM'); const s = await exited; fs.rmSync(dir, { recursive: true, force: true }); return s; },
  };
}

// ---- evidence that covers the checklist ----------------------------------------------------

async function ok(resPromise, what) {
  const r = await resPromise;
  if (r.status !== 200 && r.status !== 201) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.json;
}

const OFFERS = {
  'a100-spot': { gpu_model: 'A100-40GB', gpus_per_instance: 8, gpu_memory_gb: 40, purchase_option: 'spot', price_per_hour: 9.8, interruption_rate_per_hour: 0.15 },
  'h100-on-demand': { gpu_model: 'H100-80GB', gpus_per_instance: 8, gpu_memory_gb: 80, purchase_option: 'on_demand', price_per_hour: 55.0 },
  'l40s-on-demand': { gpu_model: 'L40S-48GB', gpus_per_instance: 8, gpu_memory_gb: 48, purchase_option: 'on_demand', price_per_hour: 14.0 },
};
const BENCHMARKS = {
  'a100-spot': { throughput_units_per_s: 60000, gpu_duty_cycle: 0.55, input_stall_fraction: 0.3, setup_s: 2400, checkpoint_write_s: 240, restart_s: 600, queue_wait_s: 5400, transfer_gb: 800, memory_peak_gb: 38 },
  'h100-on-demand': { throughput_units_per_s: 310000, gpu_duty_cycle: 0.86, input_stall_fraction: 0.04, setup_s: 1200, checkpoint_write_s: 90, restart_s: 300, checkpoint_interval_s: 3600, queue_wait_s: 1800, transfer_gb: 0 },
  // No memory_peak_gb: the workload's 62 GB does not fit 48 GB, so this option is infeasible.
  'l40s-on-demand': { throughput_units_per_s: 70000, gpu_duty_cycle: 0.7, input_stall_fraction: 0.1, setup_s: 1800, checkpoint_write_s: 150, restart_s: 400, queue_wait_s: 600, transfer_gb: 800 },
};

export function runsOf(team, cluster, n, { state = () => 'COMPLETED', start = Date.now() - 86_400_000, waitS = 60, utilization = 0.8 } = {}) {
  const runs = [];
  for (let i = 0; i < n; i++) {
    const submitted = new Date(start + i * 60_000);
    const started = new Date(submitted.getTime() + waitS * 1000);
    const ended = new Date(started.getTime() + 3_600_000);
    runs.push({
      external_id: `${crypto.randomUUID()}`, cluster, team, user: 'ana', workload_class: 'production',
      submitted_at: submitted.toISOString(), started_at: started.toISOString(), ended_at: ended.toISOString(),
      gpus: 8, state: state(i), exit_code: '0:0', gpu_utilization: utilization,
    });
  }
  return runs;
}

// Builds the evidence with `owner` (owners write for every team) and returns
// {team, workloadId, offerIds, benchmarkIds, runUploadId, scenarioId, comparison (stored row),
// result}. options: {complete: false} leaves out what the checklist's data path needs.
// Comparisons are content-addressed: a different seed keeps two evidence sets from sharing one.
export async function buildEvidence(url, admin, owner, { team = `t${crypto.randomBytes(3).toString('hex')}`, complete = true, seed = 7 } = {}) {
  await ok(api(url, 'POST', '/api/v1/teams', { token: admin.token, body: { name: team } }), 'team');
  const workload = await ok(api(url, 'POST', '/api/v1/workloads', {
    token: owner.token,
    body: {
      team, name: 'llm-7b-pretrain-slice', kind: 'training', class: 'production', target_units: 2e10,
      unit: 'tokens', memory_required_gb: 62, dataset_gb: 800, checkpoint_gb: 95, checkpoints_kept: 3,
      ...(complete ? { dataset_location: 's3://corpus/slice-7' } : {}),
    },
  }), 'workload');
  const offerIds = {};
  const benchmarkIds = {};
  for (const [name, offer] of Object.entries(OFFERS)) {
    const o = await ok(api(url, 'POST', '/api/v1/offers', {
      token: owner.token,
      body: { name, provider: 'cloud', region: 'eu-west-1', instance_type: `${name}-x8`, currency: 'USD', quota_gpus: 64, available: true, storage_price_gb_month: 0.08, egress_price_gb: 0.09, orchestration_overhead: 0.05, ...offer },
    }), `offer ${name}`);
    offerIds[name] = o.id;
    const b = await ok(api(url, 'POST', '/api/v1/benchmarks', {
      token: owner.token,
      body: { workload_id: workload.id, offer_id: o.id, measured_at: new Date(Date.now() - 3_600_000).toISOString(), repetitions: 3, outcome: 'succeeded', instances: 2, ...BENCHMARKS[name] },
    }), `benchmark ${name}`);
    benchmarkIds[name] = b.id;
  }
  const upload = await ok(api(url, 'POST', '/api/v1/runs?cluster=onprem', { token: owner.token, body: runsOf(team, 'onprem', 25, { start: Date.now() - 10 * 86_400_000 }) }), 'runs');
  const scenario = await ok(api(url, 'POST', '/api/v1/scenarios', {
    token: owner.token,
    body: {
      name: 'llm slice', team, workload_ids: [workload.id],
      document: {
        workload: workload.id,
        assumptions: { engineer_rate_per_hour: 110, engineer_blocked_fraction: 0.2, failure_probability: 0.08, failure_progress_fraction: 0.5, trials: 2000, seed },
        options: Object.keys(OFFERS).map((name) => ({ name, benchmark: benchmarkIds[name] })),
      },
    },
  }), 'scenario');
  const comparison = await ok(api(url, 'POST', `/api/v1/scenarios/${scenario.id}/comparisons`, { token: owner.token }), 'comparison');
  const full = await ok(api(url, 'GET', `/api/v1/comparisons/${comparison.sha256}`, { token: owner.token }), 'get comparison');
  return { team, workloadId: workload.id, offerIds, benchmarkIds, runUploadId: upload.id, scenarioId: scenario.id, comparison, result: full.result };
}

export async function createReview(url, owner, workloadIds, fields = {}) {
  return ok(api(url, 'POST', '/api/v1/reviews', {
    token: owner.token,
    body: { title: 'Capacity for the 7B pretraining slice', workload_ids: workloadIds, started_on: '2026-01-05', ...fields },
  }), 'review');
}
