// bench/scale.mjs — driven by bench/scale.sh: the scale-out topology of tests/scale/lib.mjs
// (primary + hot standby + two instances), and wrk through HAProxy against one instance, then
// two, with the same server's /healthz (straight, no proxy) as the baseline in the same run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { api } from '../tests/integration/lib/harness.mjs';
import { mintToken } from '../tests/integration/lib/cli.mjs';
import { addUser } from '../tests/integration/ledger.lib.mjs';
import { startTopology } from '../tests/scale/lib.mjs';

const SECONDS_EACH = Number(process.env.SECONDS_EACH || 10);
const CLIENTS = Number(process.env.CLIENTS || 32);
const TOKENS = 16; // HAProxy keeps a bearer token on one instance: spread the load over several

const t = await startTopology({ instances: 2, pool: Number(process.env.CAPLEDGER_DB_POOL || 16) });
try {
  process.env.CAPLEDGER_TEST_DATABASE_URL = t.primaryUrl;
  const srv = { url: t.url, db: 'capledger' };
  const admin = mintToken(srv, 'admin');
  const team = await api(t.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'bench' } });
  const owner = addUser(srv, 'olga', 'owner');
  const wl = await api(t.url, 'POST', '/api/v1/workloads', {
    token: owner.token,
    body: { team: 'bench', name: 'bench', kind: 'training', class: 'production', target_units: 1e9, unit: 'tokens',
      memory_required_gb: 40, dataset_gb: 100, checkpoint_gb: 10, checkpoints_kept: 2 },
  });
  if (team.status !== 201 || wl.status !== 201) throw new Error(`setup: ${team.status} ${wl.status} ${wl.text}`);
  const tokens = Array.from({ length: TOKENS }, (_, i) => mintToken(srv, 'olga', `bench-${i}`));
  const lua = path.join(t.dir, 'tokens.lua');
  fs.writeFileSync(lua, `local tokens = {${tokens.map((x) => JSON.stringify(x)).join(',')}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", nil, {["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1]})
end
`);
  const wrk = (url, script) => {
    const args = ['-t2', `-c${CLIENTS}`, `-d${SECONDS_EACH}s`, '--latency', ...(script ? ['-s', script] : []), url];
    const r = spawnSync('wrk', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`wrk ${args.join(' ')}: ${r.stderr}`);
    const rate = Number(/Requests\/sec:\s+([0-9.]+)/.exec(r.stdout)[1]);
    const p99 = /99%\s+([0-9.]+\w+)/.exec(r.stdout)?.[1] ?? '?';
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(r.stdout)?.[1] ?? 0);
    return { rate, p99, non2xx };
  };
  const one = await t.startProxy([t.apps[0]]);
  const two = { url: t.url };
  const get = `/api/v1/workloads/${wl.json.id}`;
  const rows = [];
  const baseline = wrk(`${t.apps[0].url}/healthz`);
  rows.push(['baseline: GET /healthz, instance 1 straight', baseline]);
  rows.push(['GET /healthz via HAProxy, 1 instance', wrk(`${one.url}/healthz`)]);
  rows.push(['GET /healthz via HAProxy, 2 instances', wrk(`${two.url}/healthz`)]);
  const get1 = wrk(`${one.url}${get}`, lua);
  rows.push(['GET workloads/{id} (token) via HAProxy, 1 instance', get1]);
  const get2 = wrk(`${two.url}${get}`, lua);
  rows.push(['GET workloads/{id} (token) via HAProxy, 2 instances', get2]);
  console.log(`clients: ${CLIENTS}, ${SECONDS_EACH} s each, ${(await import('node:os')).cpus().length} cores; reads from the hot standby once caught up`);
  for (const [what, m] of rows) {
    console.log(`${what.padEnd(56)} ${m.rate.toFixed(0).padStart(8)} req/s  p99 ${m.p99.padStart(8)}  ` +
                `ratio to baseline ${(m.rate / baseline.rate).toFixed(3)}${m.non2xx ? `  non-2xx ${m.non2xx}` : ''}`);
  }
  console.log(`2 instances / 1 instance (GET by id): ${(get2.rate / get1.rate).toFixed(2)}`);
  // What the instances answered besides 200 (their access logs), and HAProxy's own complaints.
  for (const app of t.apps) {
    const counts = {};
    for (const line of fs.readFileSync(app.log, 'utf8').split('\n')) {
      const m = /"route":"([^"]*)","status":(\d+)/.exec(line);
      if (m && m[2] !== '200' && m[2] !== '201') counts[`${m[1]} ${m[2]}`] = (counts[`${m[1]} ${m[2]}`] ?? 0) + 1;
    }
    if (Object.keys(counts).length) console.log(`${path.basename(app.log)} non-2xx: ${JSON.stringify(counts)}`);
  }
  for (const log of [t.proxyLog, one.log]) {
    const text = fs.readFileSync(log, 'utf8').trim();
    if (text) console.log(`${path.basename(log)}:\n${text.split('\n').slice(-6).join('\n')}`);
  }
  const metrics = (await api(t.apps[0].url, 'GET', '/metrics')).text;
  console.log(metrics.split('\n').filter((l) => /^capledger_(db_(reads_total|replica_lag)|row_cache_requests_total)/.test(l)).join('\n'));
} finally {
  await t.stop();
}
