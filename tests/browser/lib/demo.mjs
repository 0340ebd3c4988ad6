// A server loaded by scripts/demo (its public API only, as a reader of the README would run it)
// for browser tests that need the demo's data: the review with its decision and drift alerts,
// the stored comparisons, the evidence. Returns {srv, passwords, tokens, stdout, dir, stop()}.
//
// The demo runs once per input and per throwaway cluster, as migrations do (migratedTemplate in
// tests/integration/lib/harness.mjs): the first startDemo runs it against a server of its own,
// stops that server and keeps its database as the template demo_<digest>; every startDemo then
// serves a clone of that template. The digest covers all the loaded data depends on: the binary,
// scripts/demo, db/migrations, the samples the demo uploads, the test code that runs them (this
// file, cli.mjs, harness.mjs), the extra environment, and the UTC day (the demo dates its review,
// benchmarks and decision from today). What a clone needs besides the database travels in the
// template's comment, written before the template is renamed into place so that no reader sees
// half of it, and gone with the cluster: the server's log key and state file (the log's rows are
// signed with that key), the admin password of the first start, the demo's state directory
// (passwords, tokens, the approver's key) and its output.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrationsDigest, projectDir, psql, startServer } from '../../integration/lib/harness.mjs';
import { bin, runDemo } from '../../integration/lib/cli.mjs';

export const DEMO_REVIEW = 'Evaluation capacity for the 13B regression suite';

// Every file under `dir` as { relative path: contents }.
function readTree(dir, base = dir, out = {}) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) readTree(p, base, out);
    else out[path.relative(base, p)] = fs.readFileSync(p);
  }
  return out;
}

function templateName(env) {
  const hash = migrationsDigest();
  const lib = path.join(projectDir, 'tests', 'integration', 'lib');
  for (const f of [bin, path.join(projectDir, 'scripts', 'demo'), fileURLToPath(import.meta.url), path.join(lib, 'cli.mjs'), path.join(lib, 'harness.mjs')]) {
    hash.update(fs.readFileSync(f)).update('\0');
  }
  // scripts/demo uploads files of tests/data/samples: all of them count.
  for (const [name, data] of Object.entries(readTree(path.join(projectDir, 'tests', 'data', 'samples')))) {
    hash.update(name).update('\0').update(data).update('\0');
  }
  hash.update(JSON.stringify(env)).update(new Date().toISOString().slice(0, 10));
  return `demo_${hash.digest('hex').slice(0, 16)}`;
}

function readKept(name) {
  const text = psql(`SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = '${name}'`);
  return text ? JSON.parse(Buffer.from(text, 'base64').toString('utf8')) : null;
}

// Runs scripts/demo against a server of its own and keeps the result as the template `name`
// (see above); concurrent builders each load a private database, the loser of the rename drops it.
async function build(name, env) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-demo-build-'));
  let srv = null;
  try {
    srv = await startServer({ env, keepDatabase: true, keyFile: path.join(dir, 'server.key') });
    const stdout = runDemo(srv, dir);
    await srv.stop();
    const files = Object.fromEntries(Object.entries(readTree(dir)).map(([f, data]) => [f, data.toString('base64')]));
    const kept = { adminPassword: srv.adminPassword, stdout, url: srv.url, dir, files };
    psql(`COMMENT ON DATABASE ${srv.db} IS '${Buffer.from(JSON.stringify(kept)).toString('base64')}'`);
    try {
      psql(`ALTER DATABASE ${srv.db} RENAME TO ${name}`);
    } catch (e) {
      if (!/already exists/.test(e.message)) throw e;
    }
  } finally {
    if (srv) {
      await srv.stop().catch(() => {});
      psql(`DROP DATABASE IF EXISTS ${srv.db} WITH (FORCE)`);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

// What the template `name` keeps, built first if it is not there yet. One builder at a time per
// template and cluster (a lock file with its pid; the others wait for its result instead of
// loading the same data beside it); the lock of a builder that is gone is taken over.
async function keptOrBuilt(name, env) {
  const cluster = createHash('sha256').update(process.env.CAPLEDGER_TEST_DATABASE_URL ?? '').digest('hex').slice(0, 12);
  const lock = path.join(os.tmpdir(), `capledger-${name}-${cluster}.lock`);
  for (;;) {
    const found = readKept(name);
    if (found) return found;
    let fd = null;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    if (fd !== null) {
      try {
        fs.writeSync(fd, String(process.pid));
        fs.closeSync(fd);
        await build(name, env);
      } finally {
        fs.rmSync(lock, { force: true });
      }
      const built = readKept(name);
      assert.ok(built, `the demo's template ${name} is missing after it was built`);
      return built;
    }
    let holder = 0;
    try {
      holder = Number(fs.readFileSync(lock, 'utf8'));
    } catch {
      continue; // released meanwhile
    }
    if (holder > 0 && !alive(holder)) fs.rmSync(lock, { force: true });
    else await sleep(1000);
  }
}

export async function startDemo({ env: extra = {} } = {}) {
  const env = { CAPLEDGER_DRIFT_SWEEP_S: '0', ...extra };
  const name = templateName(env);
  const cache = await keptOrBuilt(name, env);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-demo-browser-'));
  let srv;
  try {
    for (const [f, data] of Object.entries(cache.files)) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(dir, f), Buffer.from(data, 'base64'), { mode: 0o600 });
    }
    srv = await startServer({ env, template: name, keyFile: path.join(dir, 'server.key'), adminPassword: cache.adminPassword });
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  // The demo's output as if it had run against this server, in this directory.
  const stdout = cache.stdout.replaceAll(cache.url, srv.url).replaceAll(cache.dir, dir);
  const passwords = Object.fromEntries([...stdout.matchAll(/^\s+(demo-\w+)\s+\(\w+\)\s+password (\S+)$/gm)].map((m) => [m[1], m[2]]));
  const tokens = {};
  for (const name of Object.keys(passwords)) {
    const f = path.join(dir, 'state', `${name}.token`);
    if (fs.existsSync(f)) tokens[name] = fs.readFileSync(f, 'utf8').trim();
  }
  return {
    srv,
    dir,
    passwords,
    tokens,
    stdout,
    async stop() {
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
