// Integration-test harness: the real capledger binary against the throwaway PostgreSQL cluster
// that scripts/test starts. Node 20, ESM, no dependencies.
//
// Each startServer() gets its own database (CREATE DATABASE t_<random>) and its own port, so
// test files can run in parallel (ctest -j) without seeing each other's data. The server's
// stdout and stderr go to a file rather than a pipe: a test that forgets stop() cannot hang its
// process on an open pipe, and any server still running when the process exits is killed.
//
// Environment (set by scripts/test and CMake):
//   CAPLEDGER_TEST_DATABASE_URL  libpq conninfo of the throwaway cluster's database (required)
//   CAPLEDGER_TEST_PGDATA, CAPLEDGER_TEST_PGBIN, CAPLEDGER_TEST_PGLOG, CAPLEDGER_TEST_PGUSER
//                                to stop and start that cluster (pgStop / pgStart)
//   CAPLEDGER_BIN                the binary under test (default: build/capledger)

import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// Test data kept in the repository (tests/data/README.md: where each file came from).
export const dataDir = path.join(projectDir, 'tests', 'data');

const HEALTH_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

function requireEnv(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run the integration tests through scripts/test ` +
                    `(or ctest after exporting what scripts/test exports)`);
  }
  return value;
}

function pgBin(tool) {
  return path.join(process.env.CAPLEDGER_TEST_PGBIN || '/usr/lib/postgresql/15/bin', tool);
}

// A libpq conninfo ("host=/x dbname=capledger user=postgres") or URL with another database.
export function withDatabase(conninfo, dbname) {
  if (/^postgres(ql)?:\/\//.test(conninfo)) {
    const url = new URL(conninfo);
    url.pathname = '/' + encodeURIComponent(dbname);
    return url.toString();
  }
  if (/(^|\s)dbname\s*=/.test(conninfo)) {
    return conninfo.replace(/(^|\s)dbname\s*=\s*('(?:[^'\\]|\\.)*'|\S+)/, `$1dbname=${dbname}`);
  }
  return `${conninfo} dbname=${dbname}`;
}

// Runs SQL with psql on the throwaway cluster (database `capledger` unless `database` is
// given) and returns psql's unaligned, tuples-only output. Throws with psql's stderr on error,
// or after timeoutMs (30 s unless given: a statement that writes millions of rows wants more
// when the machine is busy).
export function psql(sql, { database, timeoutMs = 30_000 } = {}) {
  const base = requireEnv('CAPLEDGER_TEST_DATABASE_URL');
  const conninfo = database ? withDatabase(base, database) : base;
  const r = spawnSync(pgBin('psql'), ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-d', conninfo, '-c', sql],
                      { encoding: 'utf8', timeout: timeoutMs });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`psql failed (${r.status}): ${r.stderr.trim()}\nSQL: ${sql}`);
  return r.stdout.trim();
}

function randomName(prefix) {
  return prefix + randomBytes(6).toString('hex');
}

// A port that was free a moment ago: bind port 0, read it, release it.
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Servers still running when this process exits are killed (and their scratch directories
// removed), so a failed test cannot leave an orphan holding its port.
const running = new Map(); // child process -> its scratch directory
process.on('exit', () => {
  for (const [child, dir] of running) {
    try { child.kill('SIGKILL'); } catch { /* already gone */ }
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// A hash fed with the names and contents of db/migrations (the caller may add more and digests it).
export function migrationsDigest() {
  const dir = path.join(projectDir, 'db', 'migrations');
  const hash = createHash('sha256');
  for (const f of fs.readdirSync(dir).filter((n) => /^\d{4}_.*\.sql$/.test(n)).sort()) {
    hash.update(f).update('\0').update(fs.readFileSync(path.join(dir, f))).update('\0');
  }
  return hash;
}

// The name of a database holding every migration of db/migrations and nothing else, made
// once per set of migration files (its name is a digest of their names and contents) and kept
// in the throwaway cluster, so a server start clones it instead of replaying every migration.
// Concurrent test processes each build their own copy under a private name and rename it into
// place; the loser of that race drops its copy. The server's start does the rest as it would
// on a database it migrated itself (partitions, the admin user, the log's checks).
let templateName = null;
export function migratedTemplate(bin) {
  if (templateName) return templateName;
  const name = `tpl_${migrationsDigest().digest('hex').slice(0, 16)}`;
  if (psql(`SELECT count(*) FROM pg_database WHERE datname = '${name}'`) === '0') {
    const building = randomName(`${name}_b`);
    psql(`CREATE DATABASE ${building}`);
    try {
      const r = spawnSync(bin, ['migrate'], {
        cwd: projectDir, encoding: 'utf8', timeout: 120_000,
        env: { ...process.env, CAPLEDGER_DATABASE_URL: withDatabase(requireEnv('CAPLEDGER_TEST_DATABASE_URL'), building) },
      });
      if (r.error) throw r.error;
      if (r.status !== 0) throw new Error(`capledger migrate failed (${r.status}): ${r.stderr}`);
      try {
        psql(`ALTER DATABASE ${building} RENAME TO ${name}`);
      } catch (e) {
        if (!/already exists/.test(e.message)) throw e;
      }
    } finally {
      psql(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    }
  }
  templateName = name;
  return name;
}

// Starts `capledger serve` on a fresh database and a free port; resolves once GET /healthz
// answers 200. `env` adds to or overrides the server's environment (a value of undefined
// removes a variable). Returns { url, port, pid, adminPassword, db, keyFile, stop(), stderrLines(),
// exited }. stop() sends SIGTERM, waits for the exit (SIGKILL after 10 s), drops the database
// and resolves to { code, signal }. For a caller that keeps a loaded database as a template
// (tests/browser/lib/demo.mjs): `template` is the database to clone instead of the migrated
// one, `keepDatabase` leaves the database in place at stop(), `keyFile` is the server's key
// (its .state file beside it) instead of a new one in the scratch directory, and
// `adminPassword` the password of the first start instead of a random one.
export async function startServer({ env = {}, args = [], template: from, keepDatabase = false, keyFile: key, adminPassword: password } = {}) {
  const baseConninfo = requireEnv('CAPLEDGER_TEST_DATABASE_URL');
  const bin = process.env.CAPLEDGER_BIN || path.join(projectDir, 'build', 'capledger');
  if (!fs.existsSync(bin)) throw new Error(`server binary ${bin} does not exist: build first`);

  const db = randomName('t_');
  // A database cloned from one migrated once per set of migration files (see
  // migratedTemplate), unless this server is given migrations of its own or a template.
  const template = from ?? ('CAPLEDGER_MIGRATIONS_DIR' in env ? null : migratedTemplate(bin));
  psql(template ? `CREATE DATABASE ${db} TEMPLATE ${template}` : `CREATE DATABASE ${db}`);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-it-'));
  const logFile = path.join(dir, 'server.log');
  const keyFile = key ?? path.join(dir, 'server.key');
  const adminPassword = password ?? randomBytes(18).toString('base64url');
  const url = `http://127.0.0.1:${port}`;

  const childEnv = {
    ...process.env,
    CAPLEDGER_DATABASE_URL: withDatabase(baseConninfo, db),
    CAPLEDGER_LISTEN: `127.0.0.1:${port}`,
    CAPLEDGER_STATIC_DIR: path.join(projectDir, 'static'),
    CAPLEDGER_KEY_FILE: keyFile,
    CAPLEDGER_ADMIN_PASSWORD: adminPassword,
    ...env,
  };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];

  const logFd = fs.openSync(logFile, 'a');
  // cwd: the project, where the server's default db/migrations and api/openapi.yaml are.
  const child = spawn(bin, ['serve', ...args], { cwd: projectDir, env: childEnv, stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  child.unref();
  running.set(child, dir);
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  let exitStatus = null;
  exited.then((s) => { exitStatus = s; });

  const stderrLines = () => {
    try {
      return fs.readFileSync(logFile, 'utf8').split('\n').filter((l) => l.length > 0);
    } catch {
      return [];
    }
  };

  let stopped = null;
  const stop = () => {
    stopped ??= (async () => {
      if (exitStatus === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      try {
        if (!keepDatabase) psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      } catch {
        // PostgreSQL may be down (a test stopped it); the throwaway cluster goes away anyway.
      }
      fs.rmSync(dir, { recursive: true, force: true });
      return exitStatus;
    })();
    return stopped;
  };

  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  let lastError = 'no answer';
  while (true) {
    if (exitStatus !== null) {
      const log = stderrLines().join('\n');
      await stop();
      throw new Error(`capledger serve exited (${JSON.stringify(exitStatus)}) before /healthz ` +
                      `answered; its output:\n${log}`);
    }
    try {
      const r = await api(url, 'GET', '/healthz', { timeoutMs: 1000 });
      if (r.status === 200) break;
      lastError = `status ${r.status}`;
    } catch (e) {
      lastError = e.message;
    }
    if (Date.now() > deadline) {
      const log = stderrLines().join('\n');
      await stop();
      throw new Error(`GET ${url}/healthz did not answer 200 within ${HEALTH_TIMEOUT_MS} ms ` +
                      `(last: ${lastError}); server output:\n${log}`);
    }
    await sleep(50);
  }

  // A server that answered must also stop cleanly: exit 0 after SIGTERM. Anything else — a
  // sanitizer's leak report (exit 23), an abort, a hang until SIGKILL — fails the test that
  // stops it, with the end of the server's output.
  const stopChecked = async () => {
    const status = await stop();
    if (!status || status.code !== 0) {
      const tail = stderrLinesAtStop.slice(-40).join('\n');
      throw new Error(`capledger serve did not stop cleanly (${JSON.stringify(status)}); its output ended:\n${tail}`);
    }
    return status;
  };
  let stderrLinesAtStop = [];
  exited.then(() => { stderrLinesAtStop = stderrLines(); });

  return {
    url, port, pid: child.pid, adminPassword, db, keyFile, stop: stopChecked, stderrLines,
    get exited() { return exitStatus; },
  };
}

// One HTTP request, no keep-alive. `body`: an object or array is sent as JSON (with
// Content-Type application/json unless headers say otherwise); a string or Buffer is sent as
// is. `token` adds "Authorization: Bearer", `cookie` a Cookie header; `localAddress` picks the
// client's source address (any 127.0.0.0/8 address works on Linux). Resolves to
// { status, headers (lower-case names), text, json (null when the body is not JSON) }.
export function api(baseUrl, method, urlPath, { body, headers = {}, token, cookie, timeoutMs = 10_000, localAddress } = {}) {
  const target = new URL(urlPath, baseUrl);
  const h = {};
  for (const [k, v] of Object.entries(headers)) h[k.toLowerCase()] = v;
  let payload = null;
  if (body !== undefined && body !== null) {
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      payload = Buffer.from(body);
    } else {
      payload = Buffer.from(JSON.stringify(body));
      h['content-type'] ??= 'application/json';
    }
    h['content-length'] ??= String(payload.length);
  }
  if (token) h.authorization = `Bearer ${token}`;
  if (cookie) h.cookie = cookie;

  return new Promise((resolve, reject) => {
    const req = http.request(target, { method, headers: h, agent: false, timeout: timeoutMs, localAddress }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${target} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

// Stop and start the throwaway PostgreSQL cluster (for tests of database outages). Run as the
// cluster's owner: as root that is CAPLEDGER_TEST_PGUSER (postgres), through runuser.
function pgCtl(args) {
  const pgdata = requireEnv('CAPLEDGER_TEST_PGDATA');
  let cmd = pgBin('pg_ctl');
  let argv = ['-D', pgdata, ...args];
  const owner = process.env.CAPLEDGER_TEST_PGUSER;
  if (process.getuid && process.getuid() === 0 && owner && owner !== 'root') {
    argv = ['-u', owner, '--', cmd, ...argv];
    cmd = 'runuser';
  }
  // cwd "/": the cluster's owner may not be able to read the project's directory.
  const r = spawnSync(cmd, argv, { cwd: '/', encoding: 'utf8', timeout: 90_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`pg_ctl ${args.join(' ')} failed (${r.status}): ${r.stderr.trim()}`);
}

export function pgStop({ mode = 'fast' } = {}) {
  pgCtl(['-m', mode, '-w', '-t', '60', 'stop']);
}

export function pgStart() {
  const pgdata = requireEnv('CAPLEDGER_TEST_PGDATA');
  const log = process.env.CAPLEDGER_TEST_PGLOG || path.join(path.dirname(pgdata), 'postgres.log');
  pgCtl(['-l', log, '-w', '-t', '60', 'start']);
}
