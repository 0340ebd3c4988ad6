// Scale-out under load: primary + hot standby (pg_basebackup -R) + two `capledger serve`
// instances + HAProxy (deploy/scale/haproxy.cfg), loopback only. A mixed load (run uploads,
// workload writes and reads of one's own writes, lists, reports, comparisons, signed
// decisions) runs through HAProxy while one instance is killed (SIGKILL) and brought back and
// the standby is restarted. Asserted: every answer the clients saw was a success or a 503
// with Retry-After (retried with the same Idempotency-Key until it succeeded); every
// acknowledged write is there afterwards; each caller read its own writes at once; the log has
// no gap and its audit bundle verifies with `capledger verify --key`; the standby served reads
// and replayed everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { api } from '../integration/lib/harness.mjs';
import { mintToken } from '../integration/lib/cli.mjs';
import { addOwner, buildEvidence, createReview, record, runsOf, signRecord, verifyBundle } from '../integration/ledger.lib.mjs';
import { startTopology } from './lib.mjs';

const LOAD_MS = Number(process.env.CAPLEDGER_SCALE_LOAD_MS || 24_000);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('two instances behind HAProxy on a primary and a hot standby: an instance killed and the standby restarted mid-load lose nothing', { timeout: 170_000 }, async () => {
  const t0 = Date.now();
  const phase = (what) => console.log(`# ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
  const t = await startTopology({ instances: 2, pool: 6 });
  phase('topology up');
  // The CLI helpers (user add, token create) reach the database through this variable.
  process.env.CAPLEDGER_TEST_DATABASE_URL = t.primaryUrl;
  const srv = { url: t.url, db: 'capledger' };
  try {
    const admin = { name: 'admin', token: mintToken(srv, 'admin') };
    const olga = await addOwner(srv, 'olga');
    const ev = await buildEvidence(t.url, admin, olga);
    const reviews = [];
    for (let i = 0; i < 2; i++) reviews.push(await createReview(t.url, olga, [ev.workloadId]));

    phase('evidence built');
    const seen = { ok: 0, retried503: 0, without_retry_after: [] };
    const unexpected = []; // every answer that was neither a success nor a retryable 503
    const acked = { workloads: [], uploads: [], decisions: [], comparisons: 0 };
    const staleOwnReads = [];

    // One logical request: retried on 503 (same Idempotency-Key) until it succeeds.
    // retryConflict: a create whose instance was killed between the write's commit and keeping
    // its idempotent reply is answered, on retry, 409 idempotency-reply-lost naming what was
    // written (it used to write again, or meet its own row); such creates are counted and
    // checked below to be stored exactly once, under the id the answer names. The retry may be
    // HAProxy's own (deploy/scale/haproxy.cfg retries a write with an Idempotency-Key on the
    // other instance when the first died mid-request), so the client can meet this answer on its
    // first attempt too, but only once an instance has been killed.
    const retryConflicts = [];
    let killedAt = Infinity;
    async function call(method, path, { token, body, headers = {}, expect = [200, 201], retryConflict } = {}) {
      for (let attempt = 0; attempt < 60; attempt++) {
        let r;
        try {
          r = await api(t.url, method, path, { token, body, headers, timeoutMs: 20_000 });
        } catch (e) {
          unexpected.push(`${method} ${path}: ${e.message}`);
          return null;
        }
        if (expect.includes(r.status)) {
          seen.ok++;
          return r;
        }
        if (r.status === 503) {
          seen.retried503++;
          if (!r.headers['retry-after']) seen.without_retry_after.push(`${method} ${path}: ${r.text.slice(0, 200)}`);
          await sleep(100);
          continue;
        }
        const retried = attempt > 0 || Date.now() >= killedAt;
        if (r.status === 409 && retried && /idempotency-in-progress/.test(r.text)) {
          await sleep(500); // the killed instance's session not yet gone: the claim is still live
          continue;
        }
        if (r.status === 409 && retried && retryConflict && /idempotency-reply-lost/.test(r.json?.type ?? '')) {
          retryConflicts.push({ ...retryConflict, action: r.json.action, id: r.json.target_id });
          return null;
        }
        unexpected.push(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
        return null;
      }
      unexpected.push(`${method} ${path}: still 503 after 60 attempts`);
      return null;
    }
    const key = () => crypto.randomUUID();

    let running = true;
    const writer = async (n) => {
      for (let i = 0; running; i++) {
        const body = {
          team: ev.team, name: `w${n}-${i}`, kind: 'training', class: 'production', target_units: 1e9,
          unit: 'tokens', memory_required_gb: 40, dataset_gb: 100, checkpoint_gb: 10, checkpoints_kept: 2,
        };
        const r = await call('POST', '/api/v1/workloads', { token: olga.token, body, headers: { 'Idempotency-Key': key() }, retryConflict: { kind: 'workload', name: body.name } });
        if (!r) continue;
        acked.workloads.push(r.json.id);
        // Read one's own write at once: from the standby only once it has replayed it.
        const g = await call('GET', `/api/v1/workloads/${r.json.id}`, { token: olga.token, expect: [200, 404] });
        if (g && g.status === 404) staleOwnReads.push(`${r.json.id} at ${new Date().toISOString()}`);
      }
    };
    const uploader = async () => {
      while (running) {
        const r = await call('POST', '/api/v1/runs?cluster=onprem', {
          token: olga.token, body: runsOf(ev.team, 'onprem', 20), headers: { 'Idempotency-Key': key() },
          retryConflict: { kind: 'upload' },
        });
        if (!r) continue;
        acked.uploads.push(r.json.id);
        const g = await call('GET', `/api/v1/uploads/${r.json.id}`, { token: olga.token, expect: [200, 404] });
        if (g && g.status === 404) staleOwnReads.push(`${r.json.id} at ${new Date().toISOString()}`);
      }
    };
    const reader = async () => {
      const paths = ['/api/v1/workloads?limit=20', '/api/v1/runs?limit=20', `/api/v1/comparisons/${ev.comparison.sha256}`,
        '/api/v1/reports/usage?group_by=team', '/api/v1/offers', `/api/v1/scenarios/${ev.scenarioId}`, '/api/v1/decisions?limit=20'];
      for (let i = 0; running; i++) await call('GET', paths[i % paths.length], { token: admin.token });
    };
    const comparer = async () => {
      while (running) {
        const r = await call('POST', `/api/v1/scenarios/${ev.scenarioId}/comparisons`, {
          token: olga.token, headers: { 'Idempotency-Key': key() }, retryConflict: { kind: 'comparison' },
        });
        if (r) acked.comparisons++;
      }
    };
    const decider = async (review) => {
      let prev = null;
      while (running) {
        const rec = record(olga, review.id, { decision: 'revise', comparison_sha256: [ev.comparison.sha256], supersedes: prev });
        const r = await call('POST', '/api/v1/decisions', {
          token: olga.token, body: { record: rec, signature: signRecord(olga, rec) }, headers: { 'Idempotency-Key': key() },
        });
        if (!r) break; // a chain that failed cannot go on (its next record would not supersede)
        acked.decisions.push({ id: rec.id, leaf: r.json.leaf_index });
        prev = rec.id;
      }
    };

    const events = (async () => {
      await sleep(LOAD_MS * 0.25);
      killedAt = Date.now();
      await t.killApp(1, 'SIGKILL');
      await sleep(LOAD_MS * 0.15);
      await t.restartStandby();
      await sleep(LOAD_MS * 0.15);
      await t.startApp(1);
    })();
    const started = Date.now();
    const workers = [writer(1), writer(2), uploader(), reader(), reader(), comparer(), decider(reviews[0]), decider(reviews[1])];
    await sleep(LOAD_MS);
    running = false;
    await Promise.all([...workers, events]);
    const seconds = (Date.now() - started) / 1000;
    console.log(`# ${seen.ok} successful requests in ${seconds.toFixed(1)} s (${(seen.ok / seconds).toFixed(0)}/s), ` +
                `${seen.retried503} 503s retried; acknowledged: ${acked.workloads.length} workloads, ${acked.uploads.length} ` +
                `uploads, ${acked.comparisons} comparisons, ${acked.decisions.length} decisions`);

    assert.deepEqual(unexpected, [], 'every client-visible error is a retryable 503');
    assert.deepEqual(seen.without_retry_after, [], 'every 503 says when to retry');
    assert.deepEqual(staleOwnReads, [], 'a caller reads its own writes at once');
    assert.ok(acked.workloads.length > 10 && acked.uploads.length > 2 && acked.decisions.length > 4 && acked.comparisons > 2,
      `the load did work: ${JSON.stringify({ w: acked.workloads.length, u: acked.uploads.length, d: acked.decisions.length, c: acked.comparisons })}`);

    phase('load done');
    // No acknowledged write lost (asked of the primary).
    const quoted = (ids) => ids.map((id) => `'${id}'`).join(',');
    assert.equal(Number(t.psql(`SELECT count(*) FROM workload WHERE id IN (${quoted(acked.workloads)})`)), acked.workloads.length);
    console.log(`# creates whose reply was lost with their instance (409 idempotency-reply-lost): ${retryConflicts.length}`);
    const lostAs = { workload: 'workload.create', upload: 'runs.upload', comparison: 'comparison.create' };
    for (const { kind, name, action, id } of retryConflicts) {
      assert.equal(action, lostAs[kind], `a lost ${kind} reply names the write it stood for`);
      const where = kind === 'workload' ? `team = '${ev.team}' AND name = '${name}'`
        : kind === 'upload' ? `id = '${id}'` : `sha256 = '${id}'`;
      assert.equal(t.psql(`SELECT string_agg(${kind === 'comparison' ? 'sha256' : 'id::text'}, ',') FROM ${kind} WHERE ${where}`), id,
        `${kind} ${name ?? id}, retried after its instance died, is stored exactly once, as the answer says`);
    }
    assert.equal(Number(t.psql(`SELECT count(*) FROM upload WHERE id IN (${quoted(acked.uploads)})`)), acked.uploads.length);
    const stored = new Map(t.psql(`SELECT id, leaf_index FROM decision WHERE id IN (${quoted(acked.decisions.map((d) => d.id))})`)
      .split('\n').filter(Boolean).map((l) => l.split('|')));
    for (const d of acked.decisions) assert.equal(Number(stored.get(d.id)), d.leaf, `decision ${d.id} at its acknowledged leaf`);

    // The log: no gap (every index below the checkpoint's size is a leaf), every acknowledged
    // decision at its leaf, and the audit bundle verifies against the log key.
    const cp = await call('GET', '/api/v1/log/checkpoint', { token: olga.token });
    const size = Number(cp.text.split('\n')[1]);
    const leaves = [];
    for (let start = 0; start < size; start += 500) {
      const e = await call('GET', `/api/v1/log/entries?start=${start}&end=${Math.min(size, start + 500)}`, { token: olga.token });
      leaves.push(...e.json.leaves);
    }
    assert.equal(leaves.length, size, 'one leaf for every index of the log');
    const leafIds = leaves.map((b) => JSON.parse(Buffer.from(b, 'base64').toString()).record?.id);
    for (const d of acked.decisions) assert.equal(leafIds[d.leaf], d.id);
    assert.equal(new Set(acked.decisions.map((d) => d.leaf)).size, acked.decisions.length, 'distinct leaves');
    phase('log read');
    const logKey = (await call('GET', '/api/v1/log/key', { token: olga.token })).text;
    const bundle = await call('GET', '/api/v1/audit/bundle', { token: admin.token });
    const v = verifyBundle(bundle.text, logKey);
    assert.equal(v.status, 0, v.output);

    phase('bundle verified');
    // The standby answered reads, reports its lag, and has replayed everything.
    const metrics = (await api(t.apps[0].url, 'GET', '/metrics')).text;
    console.log(metrics.split('\n').filter((l) => /^capledger_db_(reads_total|replica)/.test(l)).map((l) => `# ${l}`).join('\n'));
    const replicaReads = Number(/capledger_db_reads_total\{target="replica",reason="caught_up"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(replicaReads > 0, `the standby served reads:\n${metrics.split('\n').filter((l) => /replica|reads_total/.test(l)).join('\n')}`);
    assert.match(metrics, /^capledger_db_replica_up 1$/m);
    assert.match(metrics, /^capledger_db_replica_lag_bytes \d+$/m);
    assert.match(metrics, /^capledger_db_replica_lag_seconds [0-9.]+$/m);
    const primaryCount = t.psql('SELECT count(*) FROM workload');
    let standbyCount = null;
    for (let i = 0; i < 100 && standbyCount !== primaryCount; i++) {
      standbyCount = t.psql('SELECT count(*) FROM workload', 5433);
      if (standbyCount !== primaryCount) await sleep(100);
    }
    assert.equal(standbyCount, primaryCount, 'the standby replayed every write');
    // The instances still running stop cleanly (exit 0; under ASan, no leak report).
    const ends = await t.stop();
    assert.equal(ends.length, 2, 'instance 1 and the restarted instance 2');
    for (const end of ends) assert.equal(end.code, 0, `an instance ended ${JSON.stringify(end)}`);
  } catch (e) {
    // The failure first (CI shows the start and the end of a long output), then what the
    // logs hold beyond successful requests: every line that is not a 2xx access line, and
    // the last five lines of each.
    console.log(`# failed: ${String(e?.message ?? e).split('\n').slice(0, 20).join('\n# ')}`);
    for (const f of [t.apps[0]?.log, t.apps[1]?.log, t.proxyLog, t.standbyLog]) {
      try {
        const lines = fs.readFileSync(f, 'utf8').split('\n').filter(Boolean);
        const notable = lines.filter((l) => !/"status":2\d\d,/.test(l)).slice(-40);
        console.log(`# --- ${f}: ${lines.length} lines; not a 2xx:\n${notable.join('\n')}\n# the last five:\n${lines.slice(-5).join('\n')}`);
      } catch { /* none */ }
    }
    throw e;
  } finally {
    await t.stop();
  }
});

test('a write through one instance is read at once through the other, the standby paused', { timeout: 90_000 }, async () => {
  // The other instance remembered the caller's position from a read a moment before; the write
  // through the first instance is acknowledged after that. The standby, paused, has not replayed
  // it: the read must go to the primary (it used to trust its memory and answer 404 from the
  // standby — what a caller meets when HAProxy moves it while a write is in flight).
  const t = await startTopology({ instances: 2, pool: 2 });
  process.env.CAPLEDGER_TEST_DATABASE_URL = t.primaryUrl;
  const [one, two] = t.apps.map((a) => a.url);
  const reads = async (url) => {
    const m = (await api(url, 'GET', '/metrics')).text;
    const n = (reason) => Number(new RegExp(`capledger_db_reads_total\\{target="[a-z]+",reason="${reason}"\\} (\\d+)`).exec(m)?.[1]);
    return { caught_up: n('caught_up'), behind: n('replica_behind') };
  };
  let paused = false;
  try {
    const admin = mintToken({ url: t.url, db: 'capledger' }, 'admin');
    const made = await api(one, 'POST', '/api/v1/teams', { token: admin, body: { name: 'before' } });
    assert.equal(made.status, 201, made.text);
    // The other instance reads for this caller from the standby, which has the first write.
    const seen = await api(two, 'GET', '/api/v1/teams', { token: admin });
    assert.equal(seen.status, 200, seen.text);
    assert.ok(seen.json.items.some((x) => x.name === 'before'), seen.text);
    // On a quiet primary reads do not wait for WAL the standby cannot have yet. The position
    // asked (the insert position) lies past the commit of the row cache listener's last
    // confirmation; unflushed (a transaction that only notifies commits without a flush), that
    // WAL reached the standby only at the WAL writer's next round, 200 ms later: reads waited
    // for it (CAPLEDGER_READ_WAIT_MS, 100 ms) and then read the primary, 23 of these 41 on
    // f320ac2. On an instance with a standby the confirmations now commit with a flush.
    const quietReads = async () => {
      for (let i = 0; i < 40; i++) {
        assert.equal((await api(two, 'GET', '/api/v1/teams', { token: admin })).status, 200);
        await sleep(50);
      }
      return reads(two);
    };
    const quiet = await quietReads();
    console.log(`# 41 reads on a quiet primary: ${JSON.stringify(quiet)}`);
    assert.ok(quiet.behind <= 2 && quiet.caught_up + quiet.behind === 41, JSON.stringify(quiet));
    // The same with synchronous_commit off for the whole server (and a slow WAL writer, so that
    // nothing else flushes): the confirmations set it on for their own transaction, else reads
    // waited for the WAL writer again.
    t.psql("ALTER SYSTEM SET synchronous_commit = off; ALTER SYSTEM SET wal_writer_delay = '10s'; SELECT pg_reload_conf();");
    const off = await quietReads();
    t.psql('ALTER SYSTEM RESET synchronous_commit; ALTER SYSTEM RESET wal_writer_delay; SELECT pg_reload_conf();');
    console.log(`# 40 more with synchronous_commit off: ${JSON.stringify(off)}`);
    assert.ok(off.behind - quiet.behind <= 1, JSON.stringify(off));
    // A write acknowledged before its WAL is flushed (synchronous_commit off in the writer's
    // own session; the WAL writer made slow so the window stays open) is still read: the
    // position asked is the insert position, not the flushed one (which missed 20 of 20 such
    // writes in an attack pass).
    t.psql("ALTER SYSTEM SET wal_writer_delay = '10s'; SELECT pg_reload_conf();");
    for (let i = 0; i < 5; i++) {
      t.psql(`SET synchronous_commit = off; INSERT INTO team (name) VALUES ('async-${i}');`);
      const r = await api(two, 'GET', `/api/v1/teams/async-${i}`, { token: admin });
      assert.equal(r.status, 200, `a team written with synchronous_commit off, read at once: ${r.status} ${r.text}`);
    }
    t.psql('ALTER SYSTEM RESET wal_writer_delay; SELECT pg_reload_conf();');
    const before = await reads(two);
    t.psql('SELECT pg_wal_replay_pause()', 5433);
    paused = true;
    const after = await api(one, 'POST', '/api/v1/teams', { token: admin, body: { name: 'after' } });
    assert.equal(after.status, 201, after.text);
    const got = await api(two, 'GET', `/api/v1/teams/${after.json.id}`, { token: admin });
    assert.equal(got.status, 200, `the team just made, read through the other instance: ${got.status} ${got.text}`);
    const list = await api(two, 'GET', '/api/v1/teams', { token: admin });
    assert.ok(list.json.items.some((x) => x.name === 'after'), list.text);
    assert.equal(t.psql("SELECT pg_get_wal_replay_pause_state()", 5433), 'paused', 'the standby stayed paused throughout');
    assert.deepEqual(await reads(two), { caught_up: before.caught_up, behind: before.behind + 2 }, 'both reads after the write went to the primary');
  } finally {
    if (paused) t.psql('SELECT pg_wal_replay_resume()', 5433);
    await t.stop();
  }
});

test('a synchronous standby that is not there: notifying writes are not held, the cache says when it is off, the instance stops', { timeout: 90_000 }, async () => {
  // synchronous_standby_names naming a standby that is not connected makes every commit that
  // writes WAL with synchronous_commit on wait; an operator sets synchronous_commit = local to
  // keep writing. The row cache listener's confirmation (on an instance with a standby it writes
  // WAL, so that its commit is flushed) forced synchronous_commit on for itself: it blocked in
  // PQexecParams for good (the cache off while capledger_row_cache_listener_up said 1, SIGTERM
  // not ending the instance), and then, cancelled after 5 s, it held PostgreSQL's NOTIFY lock
  // while it waited, so every write that notifies (a workload's) took about 4.8 s.
  const t = await startTopology({ instances: 1, pool: 2 });
  const [app] = t.apps;
  const metric = async (name) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec((await api(app.url, 'GET', '/metrics')).text)?.[1]);
  const up = () => metric('capledger_row_cache_listener_up');
  const until = async (what, fn, ms) => {
    for (const end = Date.now() + ms; !(await fn());) {
      if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
      await sleep(100);
    }
  };
  process.env.CAPLEDGER_TEST_DATABASE_URL = t.primaryUrl;
  let set = false;
  let stuck = null;
  try {
    // Writes, made before commits wait: tokens and their first use (which stamps last_used_at).
    const admin = mintToken({ url: t.url, db: 'capledger' }, 'admin');
    assert.equal((await api(app.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'vision' } })).status, 201);
    const owner = (await addOwner({ url: app.url, db: 'capledger' }, 'olga')).token;
    const made = await api(app.url, 'POST', '/api/v1/workloads', { token: owner, body: { team: 'vision', name: 'w', kind: 'training', class: 'production' } });
    assert.equal(made.status, 201, made.text);
    const id = made.json.id;
    await until('the listener up', async () => (await up()) === 1, 5000);
    t.psql("ALTER SYSTEM SET synchronous_standby_names = 'not_connected'; ALTER SYSTEM SET synchronous_commit = local; SELECT pg_reload_conf();");
    set = true;
    // (1) Writes that notify are not held by the listener, over more than one 5 s round.
    const confirmed = await metric('capledger_row_cache_confirmations_total');
    const took = [];
    for (let i = 0; i < 8; i++) {
      const t0 = Date.now();
      t.psql(`UPDATE workload SET description = 'p${i}', version = version + 1 WHERE id = '${id}'`);
      took.push(Date.now() - t0);
      await sleep(700);
    }
    console.log(`# psql UPDATEs of a workload, ms: ${took.join(' ')}`);
    assert.ok(took.every((ms) => ms < 1500), `each UPDATE took under 1.5 s: ${took.join(' ')}`);
    assert.equal(await up(), 1, 'the listener\'s confirmations still come back');
    assert.ok(await metric('capledger_row_cache_confirmations_total') > confirmed + 10, 'and go on');
    const r = await api(app.url, 'GET', `/api/v1/workloads/${id}`, { token: owner });
    assert.equal(r.json.description, 'p7', 'the cache has every change');
    // (2) A write that does wait for the standby (synchronous_commit on) holds the NOTIFY lock:
    // the listener's confirmations cannot come back, and the metric says the cache is off.
    t.psql('ALTER SYSTEM RESET synchronous_commit; SELECT pg_reload_conf();');
    stuck = api(app.url, 'PATCH', `/api/v1/workloads/${id}`, { token: owner, timeoutMs: 30_000, headers: { 'If-Match': r.headers.etag }, body: { description: 'api' } })
      .catch((e) => e);
    const t0 = Date.now();
    await until('the listener said to be off', async () => (await up()) === 0, 15_000);
    console.log(`# listener off after ${Date.now() - t0} ms`);
    // (3) SIGTERM ends the instance: the stuck write is cancelled after the drain.
    const stopAt = Date.now();
    const end = await Promise.race([t.killApp(0, 'SIGTERM'), sleep(20_000).then(() => 'still running 20 s after SIGTERM')]);
    assert.deepEqual(end, { code: 0, signal: null });
    console.log(`# stopped ${Date.now() - stopAt} ms after SIGTERM; the stuck write: ${(await stuck).status ?? (await stuck).message}`);
    // (4) No backend of it is left waiting, for the standby or for a lock.
    await until('no backend waiting', async () =>
      t.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep' OR wait_event_type = 'Lock'") === '0', 8000);
  } finally {
    if (set) t.psql('ALTER SYSTEM RESET synchronous_standby_names; ALTER SYSTEM RESET synchronous_commit; SELECT pg_reload_conf();');
    await stuck;
    await t.stop();
  }
});

test('a topology whose proxy cannot start fails at once and leaves nothing running', { timeout: 60_000 }, async () => {
  const t0 = Date.now();
  const before = new Set(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('capledger-scale-')));
  await assert.rejects(startTopology({ instances: 1, pool: 2, haproxy: 'no-such-haproxy' }),
                       /haproxy: could not be started: spawn no-such-haproxy ENOENT/);
  // It did not wait out the proxy's 30 s readiness deadline.
  assert.ok(Date.now() - t0 < 25_000, `took ${Date.now() - t0} ms`);
  const left = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('capledger-scale-') && !before.has(f));
  assert.deepEqual(left, [], 'its scratch directory is removed');
  // pg_ctl stop -w returns once the postmaster removed its pid file; the process itself may
  // take a moment more to be gone (seen in a fresh Debian root): allowed 5 s.
  const leftRunning = () => spawnSync('pgrep', ['-af', 'capledger-scale-'], { encoding: 'utf8' }).stdout
    .split('\n').filter((l) => l && [...before].every((d) => !l.includes(d)) && !l.includes('pgrep'));
  let ps = leftRunning();
  for (const end = Date.now() + 5000; ps.length > 0 && Date.now() < end; ps = leftRunning()) await sleep(100);
  assert.deepEqual(ps, [], 'no PostgreSQL or capledger left running');
});
