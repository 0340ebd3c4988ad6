// `capledger import telemetry --from-url`: live DCGM telemetry. A node HTTP server plays the
// exporter with the real L40S sample (tests/data/samples/dcgm/), made a 2-GPU node by repeating
// its GPU lines with a second UUID, and a value that changes on every scrape so that each stored
// sample can be traced to the scrape it came from. The CLI runs asynchronously (the exporter
// lives in this process); the samples are read back from PostgreSQL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { freePort, psql, withDatabase } from './lib/harness.mjs';
import { bin, cli } from './lib/cli.mjs';
import { evidenceServer, makeOffer, makeWorkload, sample, text } from './evidence.lib.mjs';

const L40S = sample('dcgm/upcloud_uks_l40s_dcgm-exporter_metrics.prom').toString('utf8');
const UUID0 = 'GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43';
const UUID1 = 'GPU-00000000-1111-2222-3333-444444444444';

// The sample as scrape n serves it: GPU 0's GR_ENGINE_ACTIVE n/10 and FB_USED 1000·n MiB, GPU 1
// (the same lines with another UUID and gpu="1") n/20 and 500·n.
function exposition(n) {
  const out = [];
  for (const line of L40S.split('\n')) {
    if (line.startsWith('#') || !line.includes(UUID0)) { out.push(line); continue; }
    const set = (l, gr, fb) => l
      .replace(/^(DCGM_FI_PROF_GR_ENGINE_ACTIVE\{.*\}) \S+$/, `$1 ${gr.toFixed(6)}`)
      .replace(/^(DCGM_FI_DEV_FB_USED\{.*\}) \S+$/, `$1 ${fb}`);
    out.push(set(line, n / 10, 1000 * n));
    out.push(set(line.replace(UUID0, UUID1).replace('gpu="0"', 'gpu="1"'), n / 20, 500 * n));
  }
  return out.join('\n');
}

// The exporter: GET /metrics; `plan` decides each request's answer ('ok' | 500).
async function exporter(plan) {
  const port = await freePort();
  const served = []; // {n, at} per scrape answered 200
  const sockets = new Set();
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    if (req.url !== '/metrics') { res.writeHead(404).end(); return; }
    const what = plan(requests);
    if (what === 'stall') { res.writeHead(200, { 'Content-Type': 'text/plain' }); res.write('# HELP DCGM_FI_DEV_GPU_UTIL\n'); return; }
    if (what === 'big') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.from('# padding\n'.repeat(100_000)); // 1 MB
      let sent = 0;
      const more = () => { while (sent < 9 && res.write(chunk)) sent++; if (sent < 9) res.once('drain', () => { sent++; more(); }); else res.end(); };
      more();
      return;
    }
    if (what !== 'ok') { res.writeHead(500, { 'Content-Type': 'text/plain' }).end('exporter hiccup\n'); return; }
    const n = served.length + 1;
    served.push({ n, at: Date.now() });
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(exposition(n));
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  server.on('connection', (sock) => sockets.add(sock));
  return { url: `http://127.0.0.1:${port}/metrics`, served, get requests() { return requests; }, close: () => new Promise((r) => { for (const s of sockets) s.destroy(); server.close(r); }) };
}

let srv, as, tokens, bench;
before(async () => {
  ({ srv, as, tokens } = await evidenceServer());
  const w = await makeWorkload(as, 'ana', { team: 'vision', name: 'train', kind: 'training', class: 'production' });
  const offer = await makeOffer(as, { instance_type: 'g6e.12xlarge', gpu_model: 'L40S', gpus_per_instance: 2, gpu_memory_gb: 48, price_per_hour: 10.49 });
  bench = async () => {
    const b = await as('ana', 'POST', '/benchmarks', { body: { workload_id: w.id, offer_id: offer.id, measured_at: '2026-01-01T00:00:00Z', throughput_units_per_s: 10 } });
    assert.equal(b.status, 201, b.text);
    return b.json.id;
  };
});
after(async () => { await srv?.stop(); });

// Runs the CLI without blocking this process (the exporter answers from here).
function run(args, { signalAfterMs } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['import', ...args], {
      env: { ...process.env, CAPLEDGER_URL: srv.url, CAPLEDGER_TOKEN: tokens.ana, CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, srv.db) },
    });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
    if (signalAfterMs) setTimeout(() => child.kill('SIGTERM'), signalAfterMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(kill);
      const replies = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
      resolve({ status, stdout, stderr, replies });
    });
  });
}

const stored = (id) => psql(
  `SELECT gpu, (extract(epoch FROM ts) * 1000)::bigint, duty_cycle, memory_used_gb FROM telemetry_sample WHERE benchmark_id = '${id}' ORDER BY ts, gpu`,
  { database: srv.db }).split('\n').filter(Boolean).map((l) => {
  const [gpu, ms, duty, mem] = l.split('|');
  return { gpu, ms: Number(ms), duty: Number(duty), mem: Number(mem) };
});

test('--every 1s --for 4s: four scrapes, one 500 retried, every sample stored with its scrape time', async () => {
  const exp = await exporter((i) => (i === 2 ? 500 : 'ok'));
  const id = await bench();
  const t0 = Date.now();
  const r = await run(['telemetry', '--from-url', exp.url, '--every', '1s', '--for', '4s', '--benchmark', id]);
  const elapsed = Date.now() - t0;
  await exp.close();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(exp.served.length, 4, r.stderr);
  assert.equal(exp.requests, 5, 'the failed scrape was asked again');
  assert.match(r.stderr, /scrape 2: .*HTTP 500; trying again/);
  assert.match(r.stderr, /4 scrape\(s\): 4 stored \(8 samples: 8 inserted, 0 duplicates\), 0 failed to scrape, 0 refused, 0 lost/);
  assert.ok(elapsed >= 3000 && elapsed < 8000, `ran ${elapsed} ms`);
  assert.equal(r.replies.length, 4);
  for (const reply of r.replies) {
    assert.equal(reply.format, 'dcgm');
    assert.equal(reply.inserted, 2);
    assert.deepEqual(reply.warnings.filter((w) => w.refuses), []);
  }
  const rows = stored(id);
  assert.equal(rows.length, 8);
  for (const uuid of [UUID0, UUID1]) {
    const mine = rows.filter((x) => x.gpu === uuid);
    assert.equal(mine.length, 4, `samples of ${uuid}`);
    assert.equal(new Set(mine.map((x) => x.ms)).size, 4, 'distinct timestamps');
    mine.forEach((x, k) => {
      const n = k + 1, gpu0 = uuid === UUID0;
      assert.ok(Math.abs(x.duty - (gpu0 ? n / 10 : n / 20)) < 1e-9, `${uuid} scrape ${n} duty ${x.duty}`);
      assert.ok(Math.abs(x.mem - (gpu0 ? 1000 * n : 500 * n) / 1024) < 1e-9, `${uuid} scrape ${n} memory ${x.mem}`);
      // the timestamp is the time the GET went out: just before the exporter answered it
      const at = exp.served[k].at;
      assert.ok(x.ms <= at + 5 && x.ms > at - 1000, `scrape ${n}: ts ${x.ms} vs served ${at}`);
    });
  }
  // ~1 s apart (the schedule, not drifting with the retry)
  const ts = rows.filter((x) => x.gpu === UUID0).map((x) => x.ms);
  for (let k = 1; k < ts.length; k++) assert.ok(ts[k] - ts[k - 1] > 700 && ts[k] - ts[k - 1] < 1700, `gap ${ts[k] - ts[k - 1]}`);
});

test('an exporter that keeps failing: each failed scrape reported with the count, exit 1', async () => {
  const exp = await exporter(() => 500);
  const id = await bench();
  const r = await run(['telemetry', '--from-url', exp.url, '--every', '1s', '--for', '2s', '--benchmark', id]);
  await exp.close();
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /scrape 1 failed: .*HTTP 500 \(1 of 1 scrapes failed\)/);
  assert.match(r.stderr, /scrape 2 failed: .*HTTP 500 \(2 of 2 scrapes failed\)/);
  assert.match(r.stderr, /2 scrape\(s\): 0 stored .* 2 failed to scrape/);
  assert.equal(stored(id).length, 0);
  // nothing listens: the same, with the connection error
  const port = await freePort();
  const down = await run(['telemetry', '--from-url', `http://127.0.0.1:${port}/metrics`, '--every', '1s', '--for', '1s', '--benchmark', id]);
  assert.equal(down.status, 1);
  assert.match(down.stderr, /scrape 1 failed: 127\.0\.0\.1:\d+: Failed to connect/);
});

test('an exporter that stalls or sends more than 8 MiB: a failure within the interval, not a hang', async () => {
  const exp = await exporter((i) => (i === 1 ? 'stall' : i === 2 ? 'big' : 'ok'));
  const id = await bench();
  const t0 = Date.now();
  const r = await run(['telemetry', '--from-url', exp.url, '--every', '1s', '--for', '3s', '--benchmark', id]);
  const elapsed = Date.now() - t0;
  await exp.close();
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /scrape 1 failed: 127\.0\.0\.1:\d+ did not send the whole scrape within \d+ ms \(1 of 1 scrapes failed\)/);
  assert.match(r.stderr, /scrape 2 failed: 127\.0\.0\.1:\d+ sent more than 8 MiB \(2 of 2 scrapes failed\)/);
  assert.match(r.stderr, /3 scrape\(s\): 1 stored .* 2 failed to scrape/);
  assert.ok(elapsed < 4000, `ran ${elapsed} ms`);
  assert.equal(stored(id).length, 2);
});

test('--every 3s --for 5s against an exporter that stalls: the last scrape gives up at the end of --for', async () => {
  // hardening (issue 9): the second scrape's timeout used to run to the next tick (6 s)
  const exp = await exporter((i) => (i === 1 ? 'ok' : 'stall'));
  const id = await bench();
  const t0 = Date.now();
  const r = await run(['telemetry', '--from-url', exp.url, '--every', '3s', '--for', '5s', '--benchmark', id]);
  const elapsed = Date.now() - t0;
  await exp.close();
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /scrape 2 failed: 127\.0\.0\.1:\d+ did not send the whole scrape within (\d+) ms/);
  const within = Number(r.stderr.match(/did not send the whole scrape within (\d+) ms/)[1]);
  assert.ok(within <= 2_100, `the last scrape waited ${within} ms, past --for`);
  assert.ok(elapsed < 5_700, `ran ${elapsed} ms for --for 5s`);
  assert.equal(stored(id).length, 2);
});

test('SIGTERM: what was scraped is sent, a summary printed; exit 0 when all of it was stored', async () => {
  const exp = await exporter(() => 'ok');
  const id = await bench();
  const r = await run(['telemetry', '--from-url', exp.url, '--every', '1s', '--benchmark', id], { signalAfterMs: 2500 });
  await exp.close();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(exp.served.length, 3, r.stderr);
  assert.match(r.stderr, /3 scrape\(s\): 3 stored .*\(stopped by a signal\)/);
  assert.equal(stored(id).length, 6);
});

test('the benchmark does not exist: the 404 stops the run at once, exit 1', async () => {
  const exp = await exporter(() => 'ok');
  const r = await run(['telemetry', '--from-url', exp.url, '--every', '1s', '--for', '5s', '--benchmark', '00000000-0000-4000-8000-000000000000']);
  await exp.close();
  assert.equal(r.status, 1);
  assert.match(r.stderr, /refused: HTTP 404/);
  assert.match(r.stderr, /stopping:/);
  assert.equal(exp.served.length, 1);
});

test('bad flags are refused before anything is scraped, naming the flag', () => {
  const env = { CAPLEDGER_URL: srv.url, CAPLEDGER_TOKEN: tokens.ana };
  const u = 'http://127.0.0.1:9/metrics';
  for (const [args, want] of [
    [['--from-url', u, '--every', '15', '--benchmark', 'b'], /--every '15' is not a duration/],
    [['--from-url', u, '--every', '500ms', '--benchmark', 'b'], /--every '500ms' is not a duration of at least 1s/],
    [['--from-url', u, '--for', '10x', '--benchmark', 'b'], /--for '10x' is not a duration/],
    [['--from-url', u, '--for', '-1m', '--benchmark', 'b'], /--for '-1m' is not a duration/],
    [['--from-url', 'https://gpu1:9400/metrics', '--benchmark', 'b'], /only plain http/],
    [['--from-url', 'gpu1:9400', '--benchmark', 'b'], /--from-url 'gpu1:9400' is not an http:\/\/ URL/],
    // hardening (issue 9): control characters or spaces would be sent in the request line
    [['--from-url', 'http://127.0.0.1:9/metrics\r\nX-Injected: 1', '--benchmark', 'b'], /--from-url: the URL must not contain spaces or control characters/],
    [['--from-url', 'http://127.0.0.1:9/met\nrics', '--benchmark', 'b'], /--from-url: the URL must not contain/],
    [['--from-url', 'http://127.0.0.1:9/met rics', '--benchmark', 'b'], /--from-url: the URL must not contain/],
    [['--from-url', 'http://127.0.0.1:9/met\trics', '--benchmark', 'b'], /--from-url: the URL must not contain/],
    [['--from-url', 'http://127.0.0.1:9/met\x7frics', '--benchmark', 'b'], /--from-url: the URL must not contain/],
    [['--from-url', u, '--url', 'http://127.0.0.1:9/\r\n', '--benchmark', 'b'], /--url: the URL must not contain/],
    [['--from-url', u], /needs --benchmark ID \(or --param benchmark=ID/],
    [['--from-url', u, '--benchmark', 'b', '--param', 'format=nvidia-smi'], /format=dcgm/],
    [['--from-url', u, '--benchmark', 'b', '--param', 'benchmark=c'], /give the benchmark once/],
    [['some.prom', '--from-url', u, '--benchmark', 'b'], /--from-url takes the place of FILE/],
    [['some.prom', '--every', '15s', '--benchmark', 'b'], /--every and --for go with --from-url/],
  ]) {
    const r = cli(srv, ['import', 'telemetry', ...args], { env });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, want, args.join(' '));
  }
  const runs = cli(srv, ['import', 'runs', '--from-url', u], { env });
  assert.equal(runs.status, 2);
  assert.match(runs.stderr, /KIND telemetry only/);
});

test('?at= on the server: one scrape per upload, dcgm only; the same scrape again is duplicates', async () => {
  const id = await bench();
  const at = '2026-12-04T02:00:00.250Z';
  const once = await as('ana', 'POST', `/benchmarks/${id}/telemetry?format=dcgm&at=${at}`, text(exposition(1), 'text/plain'));
  assert.equal(once.status, 201, once.text);
  assert.equal(once.json.inserted, 2);
  assert.equal(once.json.summary.first_ts, at);
  const again = await as('ana', 'POST', `/benchmarks/${id}/telemetry?format=dcgm&at=${at}`, text(exposition(1), 'text/plain'));
  assert.equal(again.status, 201, again.text);
  assert.equal(again.json.inserted, 0);
  assert.equal(again.json.duplicates, 2);
  const two = await as('ana', 'POST', `/benchmarks/${id}/telemetry?at=${at}`, text(exposition(2) + '\n' + exposition(3), 'text/plain'));
  assert.equal(two.status, 422, two.text);
  assert.match(two.text, /second scrape/);
  const smi = await as('ana', 'POST', `/benchmarks/${id}/telemetry?format=nvidia-smi&at=${at}`, text('x', 'text/csv'));
  assert.equal(smi.status, 422);
  assert.equal(smi.json.errors[0].pointer, '?at');
  const bad = await as('ana', 'POST', `/benchmarks/${id}/telemetry?format=dcgm&at=yesterday`, text(exposition(1), 'text/plain'));
  assert.equal(bad.status, 422);
  assert.match(bad.text, /at must be an RFC 3339 time/);
  assert.equal(stored(id).length, 2);
});

// A proxy in front of the server: POST i is answered per plan(i): 'ok' (forwarded), 503 (not
// forwarded), 'lost' (forwarded and stored, but the reply never reaches the client) or 'slow'
// (the reply held back 2.5 s).
async function proxy(plan) {
  const port = await freePort();
  const target = new URL(srv.url);
  let posts = 0;
  const keys = [];
  const server = http.createServer((req, res) => {
    const i = req.method === 'POST' ? ++posts : 0;
    const what = i ? plan(i) : 'ok';
    if (i) keys.push(req.headers['idempotency-key']);
    if (what === 503) {
      req.resume();
      req.on('end', () => res.writeHead(503, { 'Content-Type': 'application/problem+json' }).end('{"status":503,"title":"Service unavailable","detail":"restarting"}'));
      return;
    }
    const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      if (what === 'lost') { r.resume(); r.on('end', () => res.socket.destroy()); return; }
      const reply = () => { res.writeHead(r.statusCode, r.headers); r.pipe(res); };
      if (what === 'slow') setTimeout(reply, 2500); else reply();
    });
    req.pipe(up);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, keys, get posts() { return posts; }, close: () => new Promise((r) => server.close(r)) };
}

test('the server briefly unavailable (a 503, a lost reply): uploads retried with the same key, nothing stored twice, exit 0', async () => {
  const exp = await exporter(() => 'ok');
  const px = await proxy((i) => (i === 1 ? 503 : i === 3 ? 'lost' : 'ok'));
  const id = await bench();
  const r = await run(['telemetry', '--url', px.url, '--from-url', exp.url, '--every', '1s', '--for', '3s', '--benchmark', id]);
  await exp.close();
  await px.close();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(exp.served.length, 3);
  assert.match(r.stderr, /upload of scrape 1 failed \(try 1\): HTTP 503 Service unavailable: restarting; 1 scrape\(s\) kept/);
  assert.match(r.stderr, /upload of scrape 2 failed \(try 1\): no reply/);
  assert.match(r.stderr, /3 scrape\(s\): 3 stored .*; 2 upload retries; 0 skipped/);
  assert.equal(px.posts, 5);
  assert.equal(px.keys[0], px.keys[1], 'scrape 1 retried with its key');
  assert.equal(px.keys[2], px.keys[3], 'scrape 2 retried with its key');
  assert.equal(new Set(px.keys).size, 3);
  const rows = stored(id);
  assert.equal(rows.length, 6, 'each scrape stored once');
  assert.equal(new Set(rows.map((x) => x.ms)).size, 3);
  assert.ok(Math.abs(rows.find((x) => x.gpu === UUID0).ms - exp.served[0].at) < 1000, 'scrape 1 kept its own time');
});

test('a server slower than the interval: the scrapes it held up are skipped and said, not taken in a burst; exit 1', async () => {
  const exp = await exporter(() => 'ok');
  const px = await proxy((i) => (i === 1 ? 'slow' : 'ok'));
  const id = await bench();
  const r = await run(['telemetry', '--url', px.url, '--from-url', exp.url, '--every', '1s', '--for', '4s', '--benchmark', id]);
  await exp.close();
  await px.close();
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /1 scheduled scrape\(s\) skipped: the uploads took \d+ ms/);
  assert.match(r.stderr, /3 scrape\(s\): 3 stored .*; 1 skipped/);
  assert.equal(exp.served.length, 3);
  const ts = stored(id).filter((x) => x.gpu === UUID0).map((x) => x.ms);
  assert.equal(ts.length, 3);
  assert.ok(ts[1] - ts[0] > 2000, 'the second scrape came after the slow upload, not on the skipped tick');
});

test('--benchmark ID is --param benchmark=ID for a file upload too', () => {
  const env = { CAPLEDGER_URL: srv.url, CAPLEDGER_TOKEN: tokens.ana };
  return bench().then((id) => {
    const r = cli(srv, ['import', 'telemetry', 'tests/data/samples/dcgm/upcloud_uks_l40s_dcgm-exporter_metrics.prom', '--benchmark', id, '--param', 'at=2026-12-04T01:00:00Z'], { env });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).inserted, 1);
    assert.deepEqual(stored(id).map((x) => x.ms), [Date.parse('2026-12-04T01:00:00Z')]);
  });
});
