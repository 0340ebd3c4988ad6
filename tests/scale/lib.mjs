// The scale-out topology on one machine, loopback only: a PostgreSQL 15 primary and a hot
// standby made with `pg_basebackup -R` (both on a private Unix socket directory), several
// `capledger serve` instances on free ports, and Debian's HAProxy in front of them with
// deploy/scale/haproxy.cfg. Used by tests/scale/*.test.mjs and bench/scale.sh.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, freePort, projectDir } from '../integration/lib/harness.mjs';

export const PGBIN = process.env.CAPLEDGER_TEST_PGBIN || '/usr/lib/postgresql/15/bin';
export const bin = process.env.CAPLEDGER_BIN || path.join(projectDir, 'build', 'capledger');
const asRoot = process.getuid && process.getuid() === 0;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A PostgreSQL tool as the cluster's owner (initdb refuses root: as root, the postgres user).
function pgArgv(tool, args) {
  const cmd = path.join(PGBIN, tool);
  return asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export function pgSync(tool, args, input) {
  const [cmd, argv] = pgArgv(tool, args);
  const r = spawnSync(cmd, argv, { cwd: '/', encoding: 'utf8', timeout: 120_000, input });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${r.status}): ${r.stderr.trim()}`);
  return r.stdout;
}

// The same without blocking the event loop (a restart while the load runs).
export function pgAsync(tool, args) {
  const [cmd, argv] = pgArgv(tool, args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd: '/', stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c) => { err += c; });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${tool} ${args.join(' ')}: ${code} ${err}`))));
  });
}

const children = new Set();
const clusters = new Set(); // data directories of PostgreSQL clusters started here
function stopClusters() {
  for (const data of clusters) {
    try { pgSync('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop']); } catch { /* not running */ }
    clusters.delete(data);
  }
}
// Whatever way this process ends — a failed start, an uncaught error, the test runner's
// timeout — it leaves no server, proxy or PostgreSQL running behind it.
process.on('exit', () => {
  for (const c of children) {
    try { c.kill('SIGKILL'); } catch { /* gone */ }
  }
  stopClusters();
});

function spawnLogged(cmd, args, env, logFile) {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(cmd, args, { cwd: projectDir, env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  children.add(child);
  child.logFile = logFile;
  child.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => { children.delete(child); resolve({ code, signal }); });
    // A program that cannot be started (not installed: ENOENT) never exits: it failed.
    child.on('error', (error) => { children.delete(child); resolve({ code: null, signal: null, error }); });
  });
  child.exited.then((end) => { child.end = end; });
  return child;
}

// Polls url+pathName until it answers 200; fails at once when `child` (the process that
// should answer) has ended or could not be started.
async function waitFor(url, pathName, what, logFile, child, ms = 30_000) {
  const deadline = Date.now() + ms;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child?.end) {
      const { code, signal, error } = child.end;
      const log = logFile && fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-4000) : '';
      throw new Error(`${what}: ${error ? `could not be started: ${error.message}` : `exited (code ${code}, signal ${signal})`} before ${url}${pathName} answered\n${log}`);
    }
    try {
      const r = await api(url, 'GET', pathName, { timeoutMs: 1000 });
      if (r.status === 200) return;
      last = `status ${r.status} ${r.text}`;
    } catch (e) { last = e.message; }
    await sleep(100);
  }
  const log = logFile && fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-4000) : '';
  throw new Error(`${what}: ${url}${pathName} did not answer 200 within ${ms} ms (last: ${last})\n${log}`);
}

// Starts the primary and the standby; resolves to the topology object. opts.instances: how
// many capledger instances (default 2), opts.pool: CAPLEDGER_DB_POOL of each, opts.haproxy:
// the HAProxy program (default haproxy from the PATH). When any part fails to start, what was
// started is stopped before the promise rejects.
export async function startTopology(opts = {}) {
  const t = {};
  try {
    return await start(t, opts);
  } catch (e) {
    if (t.stop) await t.stop(); // everything started so far
    else stopClusters();
    throw e;
  }
}

async function start(t, { instances = 2, pool = 8, env = {}, haproxy = 'haproxy' }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-scale-'));
  const sock = path.join(dir, 'sock');
  fs.mkdirSync(sock);
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    fs.chownSync(dir, uid, gid);
    fs.chownSync(sock, uid, gid);
  }
  fs.chmodSync(dir, 0o755);
  fs.chmodSync(sock, 0o700);
  Object.assign(t, {
    dir, sock, procs: [], apps: [], proxy: null,
    primaryData: path.join(dir, 'primary'), standbyData: path.join(dir, 'standby'),
    primaryLog: path.join(dir, 'primary.log'), standbyLog: path.join(dir, 'standby.log'),
  });
  t.primaryUrl = `host=${sock} port=5432 dbname=capledger user=postgres`;
  t.standbyUrl = `host=${sock} port=5433 dbname=capledger user=postgres`;
  t.psql = (sql, port = 5432) => pgSync('psql', ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-h', sock, '-p', String(port), '-U', 'postgres', '-d', 'capledger', '-f', '-'], sql).trim();

  // Stops everything; resolves to how each capledger instance still running ended (a clean
  // stop is exit 0: under ASan a leak report exits 23).
  let stopped = null;
  t.stop = () => (stopped ??= (async () => {
    const ends = [];
    for (const c of [...children]) {
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
      const end = await c.exited;
      clearTimeout(timer);
      if (c.spawnfile === bin) ends.push({ ...end, log: fs.readFileSync(c.logFile, 'utf8').split('\n').slice(-20).join('\n') });
    }
    stopClusters();
    fs.rmSync(dir, { recursive: true, force: true });
    return ends;
  })());

  clusters.add(t.primaryData);
  pgSync('initdb', ['-D', t.primaryData, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  fs.appendFileSync(path.join(t.primaryData, 'postgresql.conf'), [
    "listen_addresses = ''", `unix_socket_directories = '${sock}'`, 'port = 5432',
    'max_connections = 100', 'wal_level = replica', 'max_wal_senders = 4', 'max_replication_slots = 4',
    'fsync = off', 'full_page_writes = off', 'shared_buffers = 64MB', '',
  ].join('\n'));
  pgSync('pg_ctl', ['-D', t.primaryData, '-l', t.primaryLog, '-w', '-t', '60', 'start']);
  pgSync('psql', ['-X', '-q', '-h', sock, '-p', '5432', '-U', 'postgres', '-d', 'postgres', '-c', 'CREATE DATABASE capledger']);
  // The hot standby: a base backup that writes standby.signal and primary_conninfo (-R), with a
  // replication slot so that a restarted standby finds the WAL it missed.
  pgSync('pg_basebackup', ['-D', t.standbyData, '-R', '-X', 'stream', '-C', '-S', 'scale_standby', '-c', 'fast', '--no-sync',
    '-h', sock, '-p', '5432', '-U', 'postgres']);
  fs.appendFileSync(path.join(t.standbyData, 'postgresql.conf'), ['', 'port = 5433', 'hot_standby = on',
    'hot_standby_feedback = on', ''].join('\n'));
  clusters.add(t.standbyData);
  t.startStandby = () => pgAsync('pg_ctl', ['-D', t.standbyData, '-l', t.standbyLog, '-w', '-t', '60', 'start']);
  t.restartStandby = () => pgAsync('pg_ctl', ['-D', t.standbyData, '-l', t.standbyLog, '-m', 'fast', '-w', '-t', '60', 'restart']);
  await t.startStandby();

  t.adminPassword = randomBytes(18).toString('base64url');
  t.keyFile = path.join(dir, 'server.key');
  t.appEnv = (port) => ({
    ...process.env,
    CAPLEDGER_DATABASE_URL: t.primaryUrl,
    CAPLEDGER_READ_DATABASE_URL: t.standbyUrl,
    CAPLEDGER_LISTEN: `127.0.0.1:${port}`,
    CAPLEDGER_STATIC_DIR: path.join(projectDir, 'static'),
    CAPLEDGER_KEY_FILE: t.keyFile,
    CAPLEDGER_ADMIN_PASSWORD: t.adminPassword,
    CAPLEDGER_DB_POOL: String(pool),
    ...env,
  });
  // Instance i (0-based) on its port; the first start migrates, so they start one by one.
  t.startApp = async (i) => {
    const app = t.apps[i] ?? { port: await freePort(), log: path.join(dir, `app${i + 1}.log`) };
    t.apps[i] = app;
    app.url = `http://127.0.0.1:${app.port}`;
    app.child = spawnLogged(bin, ['serve'], t.appEnv(app.port), app.log);
    await waitFor(app.url, '/readyz', `instance ${i + 1}`, app.log, app.child);
    return app;
  };
  t.killApp = async (i, signal = 'SIGKILL') => {
    const app = t.apps[i];
    app.child.kill(signal);
    return app.child.exited;
  };
  for (let i = 0; i < instances; i++) await t.startApp(i);

  // HAProxy with deploy/scale/haproxy.cfg in front of the given instances (one instance: both
  // server entries name it).
  t.startProxy = async (apps) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const log = path.join(dir, `haproxy-${port}.log`);
    const addrs = apps.map((a) => `127.0.0.1:${a.port}`);
    const child = spawnLogged(haproxy, ['-db', '-f', path.join(projectDir, 'deploy', 'scale', 'haproxy.cfg')], {
      ...process.env,
      CAPLEDGER_HAPROXY_BIND: `127.0.0.1:${port}`,
      CAPLEDGER_APP1: addrs[0],
      CAPLEDGER_APP2: addrs[1] ?? addrs[0],
      CAPLEDGER_HAPROXY_ERRORS: path.join(projectDir, 'deploy', 'scale'),
    }, log);
    await waitFor(url, '/readyz', 'haproxy', log, child);
    return { url, log, child };
  };
  const proxy = await t.startProxy(t.apps);
  t.url = proxy.url;
  t.proxyLog = proxy.log;
  t.proxy = proxy.child;
  return t;
}
