// The log's tiles (C2SP tlog-tiles, db/migrations/0070_log_tiles.sql): a log without them (as
// before the migration) gets them built at the next start; proofs read from them verify
// against roots computed here from every leaf; each append grows exactly the tiles the spec
// says; and the streamed audit bundle is byte for byte the compact dump of its document.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import {
  addOwner, merkleRoot, openCheckpoint, signWithServerKey, startTwin,
  verifyBundle, verifyConsistency, verifyInclusion,
} from './ledger.lib.mjs';

const N = 700; // two full level-0 tiles and a partial one, a partial level-1 tile

let srv;
let twin;
let admin;
const sql = (q) => psql(q, { database: srv.db });

before(async () => {
  srv = await startServer();
  admin = { name: 'admin', token: mintToken(srv, 'admin') };
});
after(async () => {
  await twin?.stop();
  await srv?.stop();
});

const leafHashes = () => sql("SELECT encode(leaf_hash, 'hex') FROM log_leaf ORDER BY leaf_index")
  .split('\n').filter(Boolean).map((h) => Buffer.from(h, 'hex'));

// The level-L stored hashes of a tree: roots of its perfect 256^L-leaf subtrees.
function levelHashes(hashes, level) {
  const width = 256 ** level, out = [];
  for (let i = 0; (i + 1) * width <= hashes.length; i++) out.push(merkleRoot(hashes.slice(i * width, (i + 1) * width)));
  return out;
}

// Every tile row the spec's layout gives for these leaves.
function expectedTiles(hashes) {
  const rows = [];
  for (let level = 0; ; level++) {
    const h = levelHashes(hashes, level);
    if (h.length === 0) break;
    for (let t = 0; t * 256 < h.length; t++) rows.push(`${level}|${t}|${Buffer.concat(h.slice(t * 256, (t + 1) * 256)).toString('hex')}`);
  }
  return rows;
}

const storedTiles = () => sql("SELECT level || '|' || tile_index || '|' || encode(hashes, 'hex') FROM log_tile ORDER BY level, tile_index")
  .split('\n').filter(Boolean);

test('each append writes its tiles in the same transaction', async () => {
  await addOwner(srv, 'olga'); // a key event leaf
  await addOwner(srv, 'pavel');
  const hashes = leafHashes();
  assert.ok(hashes.length >= 2);
  assert.deepEqual(storedTiles(), expectedTiles(hashes));
});

test('a log without tiles gets them at start, and proofs from them verify', async () => {
  // Grow the log behind the server's back to N leaves, as a superuser would restore an old
  // database: leaves, head (size, root, compact range) and the signed checkpoint, no tiles.
  const have = Number(sql('SELECT count(*) FROM log_leaf'));
  sql(`SET session_replication_role = replica;
       INSERT INTO log_leaf (leaf_index, leaf, leaf_hash)
       SELECT i, convert_to('synthetic leaf ' || i, 'UTF8'), sha256('\\x00'::bytea || convert_to('synthetic leaf ' || i, 'UTF8'))
       FROM generate_series(${have}, ${N - 1}) i;
       DELETE FROM log_tile;`);
  const hashes = leafHashes();
  assert.equal(hashes.length, N);
  const root = merkleRoot(hashes);
  const frontier = [];
  for (let start = 0, bit = 2 ** 30; bit >= 1; bit /= 2) {
    if (N & bit) { frontier.push(merkleRoot(hashes.slice(start, start + bit))); start += bit; }
  }
  const origin = sql('SELECT origin FROM log_head');
  const note = signWithServerKey(srv.keyFile, origin, N, root).replace(/'/g, "''");
  sql(`SET session_replication_role = replica;
       UPDATE log_head SET size = ${N}, root = '\\x${root.toString('hex')}', frontier = '\\x${Buffer.concat(frontier).toString('hex')}';
       INSERT INTO log_checkpoint (tree_size, root, note) VALUES (${N}, '\\x${root.toString('hex')}', '${note}');`);
  assert.equal(storedTiles().length, 0);

  twin = await startTwin(srv);
  assert.match(twin.log(), /log tiles built from the leaves/);
  assert.deepEqual(storedTiles(), expectedTiles(hashes));
  const get = (p) => api(twin.url, 'GET', p, { token: admin.token });
  const key = (await get('/api/v1/log/key')).text;
  const cp = openCheckpoint((await get('/api/v1/log/checkpoint')).text, key);
  assert.equal(cp.size, N);
  assert.ok(cp.root.equals(root));
  const hex = (p) => p.json.hashes.map((h) => Buffer.from(h, 'hex'));
  const sizes = [1, 2, 3, 255, 256, 257, 511, 512, 513, 600, N];
  for (const size of sizes) {
    const r = merkleRoot(hashes.slice(0, size));
    const indexes = new Set([0, 1, size >> 1, size - 2, size - 1, 255, 256, 257].filter((i) => i >= 0 && i < size));
    for (const index of indexes) {
      const p = await get(`/api/v1/log/proof/inclusion?index=${index}&size=${size}`);
      assert.equal(p.status, 200, p.text);
      assert.ok(verifyInclusion(index, size, hashes[index], hex(p), r), `inclusion ${index}/${size}`);
    }
    for (const second of sizes.filter((s) => s >= size)) {
      const c = await get(`/api/v1/log/proof/consistency?first=${size}&second=${second}`);
      assert.equal(c.status, 200, c.text);
      assert.ok(verifyConsistency(size, second, r, merkleRoot(hashes.slice(0, second)), hex(c)), `consistency ${size}→${second}`);
    }
  }
});

test('appends after the rebuild grow the same tiles', async () => {
  await addOwner(srv, 'quinn'); // through the first server: the tiles live in the database
  const hashes = leafHashes();
  assert.equal(hashes.length, N + 1);
  assert.deepEqual(storedTiles(), expectedTiles(hashes));
  // A tile that lost its last hash stops appends instead of being written out of place.
  sql(`SET session_replication_role = replica;
       UPDATE log_tile SET hashes = substr(hashes, 1, length(hashes) - 32) WHERE level = 0 AND tile_index = ${Math.floor(N / 256)}`);
  const owner = await addOwner(srv, 'rita').catch((e) => e);
  assert.ok(owner instanceof Error, 'the append with a short tile was refused');
  assert.equal(leafHashes().length, N + 1, 'nothing was appended');
});

test('a tile only grows', () => {
  assert.throws(() => sql("UPDATE log_tile SET hashes = substr(hashes, 1, 32) WHERE level = 0 AND tile_index = 0"), /only grows/);
  // Longer, but not by appending: the hashes it had changed.
  assert.throws(() => sql(`UPDATE log_tile SET hashes = sha256(hashes) || hashes WHERE level = 0 AND tile_index = ${Math.floor(N / 256)}`), /only grows/);
});

test('the streamed bundle is the compact dump of its document, leaves in log order', async () => {
  // A fresh server with real leaves only (the synthetic ones above are not decisions).
  const s2 = await startServer();
  try {
    const a2 = { token: mintToken(s2, 'admin') };
    for (const name of ['ann', 'bob', 'cid']) await addOwner(s2, name);
    const b = await api(s2.url, 'GET', '/api/v1/audit/bundle', { token: a2.token });
    assert.equal(b.status, 200);
    assert.equal(b.headers['transfer-encoding'], 'chunked');
    assert.equal(b.headers['content-length'], undefined);
    assert.equal(b.text, JSON.stringify(b.json), 'same bytes as the whole document dumped at once');
    assert.deepEqual(Object.keys(b.json), ['origin', 'verifier_key', 'checkpoint', 'leaves', 'signer_keys', 'comparisons']);
    const size = Number(psql('SELECT size FROM log_head', { database: s2.db }));
    const entries = await api(s2.url, 'GET', `/api/v1/log/entries?start=0&end=${size}`, { token: a2.token });
    assert.deepEqual(b.json.leaves, entries.json.leaves);
    const key = (await api(s2.url, 'GET', '/api/v1/log/key', { token: a2.token })).text;
    const v = verifyBundle(b.text, key);
    assert.equal(v.status, 0, v.output);
  } finally {
    await s2.stop();
  }
});
