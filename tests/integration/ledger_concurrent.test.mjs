// Two server processes on one database append decisions at the same time. Afterwards the log
// must have no gap, exactly one signed checkpoint per size, each for the root of the leaves
// below it, consistency between any two checkpoints, and a bundle `capledger verify` accepts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import {
  addOwner, createReview, leafHash, merkleRoot, openCheckpoint, postDecision, record,
  startTwin, verifyBundle, verifyConsistency,
} from './ledger.lib.mjs';

const DECISIONS = 240;     // in total, split over the two servers
const CLIENTS_PER_SERVER = 6;
const KEYS = 2;             // the two owners' key enrolment leaves come first
const TOTAL = DECISIONS + KEYS;

let srv;
let twin;
before(async () => {
  srv = await startServer();
  twin = await startTwin(srv);
});
after(async () => {
  await twin?.stop();
  await srv?.stop();
});

test(`${DECISIONS} decisions appended through two servers at once make one consistent log`, async (t) => {
  const admin = { token: mintToken(srv, 'admin') };
  const owners = [await addOwner(srv, 'olga'), await addOwner(srv, 'pavel')];
  assert.equal((await api(srv.url, 'POST', '/api/v1/teams', { token: admin.token, body: { name: 'vision' } })).status, 201);
  const review = await createReview(srv.url, owners[0], []);
  const urls = [srv.url, twin.url];

  const started = Date.now();
  const results = [];
  const perClient = DECISIONS / (urls.length * CLIENTS_PER_SERVER);
  await Promise.all(urls.flatMap((url, s) => Array.from({ length: CLIENTS_PER_SERVER }, async (_, c) => {
    const owner = owners[(s + c) % owners.length];
    for (let i = 0; i < perClient; i++) {
      const r = await postDecision(url, owner, record(owner, review.id, { decision: i % 5 === 4 ? 'stop' : 'revise' }));
      assert.equal(r.status, 201, r.text);
      results.push(r.json);
    }
  })));
  const seconds = (Date.now() - started) / 1000;
  t.diagnostic(`appended ${DECISIONS} decisions in ${seconds.toFixed(2)} s`);
  assert.equal(results.length, DECISIONS);

  // Every reply had its own index; together they are 0..N-1.
  const indexes = results.map((r) => r.leaf_index).sort((a, b) => a - b);
  assert.deepEqual(indexes, Array.from({ length: DECISIONS }, (_, i) => i + KEYS));
  // In the database: no gap, one checkpoint per size 0..N.
  const db = (q) => psql(q, { database: srv.db });
  assert.equal(db('SELECT count(*) || \' \' || min(leaf_index) || \' \' || max(leaf_index) FROM log_leaf'), `${TOTAL} 0 ${TOTAL - 1}`);
  assert.equal(db('SELECT count(*) || \' \' || count(DISTINCT tree_size) || \' \' || max(tree_size) FROM log_checkpoint'), `${TOTAL + 1} ${TOTAL + 1} ${TOTAL}`);
  assert.equal(db('SELECT size FROM log_head'), String(TOTAL));

  // Each stored checkpoint is signed and names the root of the leaves below it.
  const key = (await api(srv.url, 'GET', '/api/v1/log/key', { token: admin.token })).text;
  const leaves = [];
  for (let start = 0; start < TOTAL; start += 100) {
    const e = await api(twin.url, 'GET', `/api/v1/log/entries?start=${start}&end=${Math.min(start + 100, TOTAL)}`, { token: admin.token });
    assert.equal(e.status, 200, e.text);
    leaves.push(...e.json.leaves.map((b) => Buffer.from(b, 'base64')));
  }
  const hashes = leaves.map(leafHash);
  const notes = db("SELECT string_agg(encode(convert_to(note, 'UTF8'), 'base64'), ',' ORDER BY tree_size) FROM log_checkpoint")
    .replace(/\n/g, '').split(',').map((b) => Buffer.from(b, 'base64').toString());
  const checkpoints = notes.map((n) => openCheckpoint(n, key));
  checkpoints.forEach((cp, size) => {
    assert.equal(cp.size, size);
    assert.ok(cp.root.equals(merkleRoot(hashes.slice(0, size))), `root of size ${size}`);
  });
  // The replies' checkpoints are those stored checkpoints.
  for (const r of results) assert.equal(r.checkpoint, notes[r.tree_size]);

  // Consistency proofs from either server between a spread of sizes.
  for (const first of [1, 2, 3, 7, 64, 100, 129, DECISIONS - 1]) {
    for (const [i, url] of urls.entries()) {
      const second = i === 0 ? TOTAL : Math.min(TOTAL, first + 17);
      const p = await api(url, 'GET', `/api/v1/log/proof/consistency?first=${first}&second=${second}`, { token: admin.token });
      assert.equal(p.status, 200, p.text);
      assert.ok(verifyConsistency(first, second, checkpoints[first].root, checkpoints[second].root,
        p.json.hashes.map((h) => Buffer.from(h, 'hex'))), `consistency ${first}→${second}`);
    }
  }

  const bundle = await api(twin.url, 'GET', '/api/v1/audit/bundle', { token: admin.token });
  assert.equal(bundle.json.leaves.length, TOTAL);
  const v = verifyBundle(bundle.text, key);
  assert.equal(v.status, 0, v.output);
});

test('a server started with another origin or another key refuses to start', async () => {
  const { spawnSync } = await import('node:child_process');
  const { bin } = await import('./lib/cli.mjs');
  const { projectDir, withDatabase } = await import('./lib/harness.mjs');
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-origin-'));
  const env = {
    ...process.env,
    CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, srv.db),
    CAPLEDGER_LISTEN: '127.0.0.1:1',
  };
  const origin = spawnSync(bin, ['serve'], { cwd: projectDir, env: { ...env, CAPLEDGER_KEY_FILE: srv.keyFile, CAPLEDGER_LOG_ORIGIN: 'example.org/other' }, encoding: 'utf8', timeout: 30_000 });
  assert.notEqual(origin.status, 0);
  assert.match(origin.stderr, /origin is 'localhost\/capledger' but CAPLEDGER_LOG_ORIGIN is 'example.org\/other'/);
  const key = spawnSync(bin, ['serve'], { cwd: projectDir, env: { ...env, CAPLEDGER_KEY_FILE: path.join(dir, 'new.key') }, encoding: 'utf8', timeout: 30_000 });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.notEqual(key.status, 0);
  assert.match(key.stderr, /the log is signed by key localhost\/capledger\+[0-9a-f]{8}\+/);
});
