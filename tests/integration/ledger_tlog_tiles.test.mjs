// The log served as C2SP tlog-tiles (https://c2sp.org/tlog-tiles) under the prefix /api/v1/log:
// a client written here from the spec alone (its own path encoding, node:crypto SHA-256, RFC
// 9162 hashing) fetches the checkpoint, the tiles and the entry bundles of a log of more than
// 256 leaves appended over HTTP, recomputes the checkpoint's root from the tiles, proves a
// leaf's inclusion from them, and checks the entries hash to the level-0 tiles. Then the
// edges: partial tiles, immutability, 404 beyond the checkpoint, 400 naming the bad part.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { api, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, addUser, leafHash, merkleRoot, newKeyPair, nodeHash, openCheckpoint, verifyInclusion } from './ledger.lib.mjs';

const KEYS = 520; // enrolment leaves: two full level-0 tiles, a partial one, a partial level 1

let srv;
let auditor;
let owner;
let prefix; // the tlog-tiles prefix: <url>/api/v1/log

before(async () => {
  srv = await startServer();
  owner = await addOwner(srv, 'tilda'); // one enrolment leaf
  auditor = addUser(srv, 'audra', 'auditor');
  // Each further signing key of the owner is one more enrolment leaf, appended over HTTP from
  // a browser session just signed in (no password hashed per key: docs/auth.md, step-up).
  const signIn = await api(srv.url, 'POST', '/api/v1/session', { body: { username: owner.name, password: owner.password } });
  assert.equal(signIn.status, 201, signIn.text);
  const browser = {
    cookie: [signIn.headers['set-cookie']].flat()[0].split(';')[0],
    headers: { 'X-CSRF-Token': signIn.json.csrf_token, Origin: srv.url },
  };
  const queue = Array.from({ length: KEYS - 1 }, () => newKeyPair());
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (queue.length) {
      const k = queue.shift();
      const r = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { ...browser, body: { public_key: k.publicKeyB64 } });
      assert.ok(r.status === 200 || r.status === 201, r.text);
    }
  }));
  prefix = `${srv.url}/api/v1/log`;
});
after(async () => { await srv?.stop(); });

// The spec's encoding, written independently of the server's: N in zero-padded groups of three
// digits, all but the last prefixed with "x"; ".p/W" only for a partial tile.
function tilePath(level, n, width = 256) {
  let digits = String(n);
  while (digits.length % 3) digits = `0${digits}`;
  const groups = digits.match(/.../g);
  const name = groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
  return `tile/${level}/${name}${width < 256 ? `.p/${width}` : ''}`;
}

async function fetchBytes(path, token = auditor.token) {
  const res = await fetch(`${prefix}/${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

// A tile's hashes, as the client of the spec fetches it for a tree of `size` leaves: the full
// tile when the tree has it, else the partial one of the width the tree gives it.
const tileCache = new Map();
async function tile(level, n, size) {
  const have = Math.floor(size / 256 ** level); // stored hashes at that level
  const width = Math.min(256, have - n * 256);
  assert.ok(width > 0, `tile ${level}/${n} is not in a tree of ${size}`);
  const path = tilePath(level, n, width);
  if (!tileCache.has(path)) {
    const r = await fetchBytes(path);
    assert.equal(r.status, 200, `${path}: ${r.body.toString()}`);
    assert.equal(r.headers.get('content-type'), 'application/octet-stream');
    assert.match(r.headers.get('cache-control'), /immutable/);
    assert.equal(r.body.length, width * 32, `${path} has ${width} hashes`);
    tileCache.set(path, Array.from({ length: width }, (_, i) => r.body.subarray(i * 32, i * 32 + 32)));
  }
  return tileCache.get(path);
}

// The root of the perfect subtree of 2^h leaves starting at `start` (aligned), from the tiles:
// level L = floor(h / 8) holds its 2^(h - 8L) consecutive stored hashes, all in one tile.
async function perfectRoot(start, h, size) {
  const level = Math.floor(h / 8);
  const count = 2 ** (h - 8 * level);
  const first = start / 256 ** level;
  const hashes = await tile(level, Math.floor(first / 256), size);
  return merkleRoot(hashes.slice(first % 256, first % 256 + count));
}

// MTH(D[start : start + n]) (RFC 9162 §2.1.1) from the tiles: a perfect aligned range from
// its stored hashes, any other split at the largest power of two below n.
async function subtreeHash(start, n, size) {
  if ((n & (n - 1)) === 0) return perfectRoot(start, Math.log2(n), size);
  let k = 1;
  while (k * 2 < n) k *= 2;
  return nodeHash(await subtreeHash(start, k, size), await subtreeHash(start + k, n - k, size));
}

// PATH(m, D[start : start + n]) (RFC 9162 §2.1.3.1) from the tiles.
async function inclusionPath(m, start, n, size) {
  if (n === 1) return [];
  let k = 1;
  while (k * 2 < n) k *= 2;
  if (m < k) return [...await inclusionPath(m, start, k, size), await subtreeHash(start + k, n - k, size)];
  return [...await inclusionPath(m - k, start + k, n - k, size), await subtreeHash(start, k, size)];
}

// An entry bundle: big-endian uint16 length-prefixed entries.
function entries(body) {
  const out = [];
  for (let at = 0; at < body.length;) {
    assert.ok(at + 2 <= body.length, 'a length prefix cut short');
    const len = body.readUInt16BE(at);
    assert.ok(at + 2 + len <= body.length, 'an entry cut short');
    out.push(body.subarray(at + 2, at + 2 + len));
    at += 2 + len;
  }
  return out;
}

test('the checkpoint is the signed note, at <prefix>/checkpoint', async () => {
  const r = await fetchBytes('checkpoint');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  const key = (await fetchBytes('key')).body.toString();
  const cp = openCheckpoint(r.body.toString(), key);
  assert.equal(cp.size, KEYS);
});

test('the root recomputed from the tiles is the checkpoint\'s, and inclusion proofs hold', async () => {
  const key = (await fetchBytes('key')).body.toString();
  const cp = openCheckpoint((await fetchBytes('checkpoint')).body.toString(), key);
  const size = cp.size;
  assert.ok(size > 512);
  // The root from the tiles alone, splitting as MTH does (level-1 hashes for the full 256s).
  assert.ok((await subtreeHash(0, size, size)).equals(cp.root), 'root from the tiles');
  // Each level-1 hash is the MTH of its full level-0 tile.
  const level1 = await tile(1, 0, size);
  assert.equal(level1.length, Math.floor(size / 256));
  for (let t = 0; t < level1.length; t++) assert.ok(merkleRoot(await tile(0, t, size)).equals(level1[t]), `level-1 hash ${t}`);
  // Every leaf hash, from the level-0 tiles (the full ones and the partial last one).
  const leafHashes = [];
  for (let t = 0; t * 256 < size; t++) leafHashes.push(...await tile(0, t, size));
  assert.equal(leafHashes.length, size);
  assert.ok(merkleRoot(leafHashes).equals(cp.root), 'root over all leaf hashes');
  // Inclusion proofs computed from the tiles, checked against the signed root, and equal to
  // the server's own proof route.
  for (const index of [0, 1, 255, 256, 257, 300, 511, 512, size - 1]) {
    const path = await inclusionPath(index, 0, size, size);
    assert.ok(verifyInclusion(index, size, leafHashes[index], path, cp.root), `inclusion of ${index}`);
    const served = await api(srv.url, 'GET', `/api/v1/log/proof/inclusion?index=${index}&size=${size}`, { token: auditor.token });
    assert.deepEqual(served.json.hashes, path.map((h) => h.toString('hex')));
  }
});

test('entry bundles hold the leaves, each hashing to its level-0 tile hash', async () => {
  const size = KEYS;
  const all = [];
  for (let t = 0; t * 256 < size; t++) {
    const width = Math.min(256, size - t * 256);
    const r = await fetchBytes(tilePath('entries', t, width));
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(r.headers.get('content-type'), 'application/octet-stream');
    assert.match(r.headers.get('cache-control'), /max-age=\d{6,}/);
    const bundle = entries(r.body);
    assert.equal(bundle.length, width);
    const hashes = await tile(0, t, size);
    bundle.forEach((leaf, i) => assert.ok(leafHash(leaf).equals(hashes[i]), `entry ${t * 256 + i}`));
    all.push(...bundle);
  }
  // The same bytes as the JSON entries route.
  const json = await api(srv.url, 'GET', '/api/v1/log/entries?start=0&end=520', { token: auditor.token });
  assert.deepEqual(all.map((l) => l.toString('base64')), json.json.leaves);
  assert.match(all[0].toString(), /"kind":"key_enrol"/);
});

// One GET with exactly these headers and the body as sent (fetch would ask for gzip itself and
// inflate it unseen).
function rawGet(path, headers) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${prefix}/${path}`, { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
}

test('entry bundles are gzip-compressed for clients that take gzip; hash tiles never', async () => {
  const auth = { authorization: `Bearer ${auditor.token}` };
  const path = tilePath('entries', 0, 256);
  const plain = await rawGet(path, { ...auth, 'accept-encoding': 'identity' });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers.vary, 'Accept-Encoding');
  const gz = await rawGet(path, { ...auth, 'accept-encoding': 'br, gzip;q=0.5' });
  assert.equal(gz.status, 200);
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gz.headers.vary, 'Accept-Encoding');
  assert.match(gz.headers['cache-control'], /immutable/);
  assert.ok(gz.body.length < plain.body.length / 2, `${gz.body.length} of ${plain.body.length} bytes`);
  assert.ok(zlib.gunzipSync(gz.body).equals(plain.body), 'the same bundle once inflated');
  const refused = await rawGet(path, { ...auth, 'accept-encoding': 'gzip;q=0' });
  assert.equal(refused.headers['content-encoding'], undefined);
  assert.ok(refused.body.equals(plain.body));
  const hashes = await rawGet(tilePath(0, 0, 256), { 'accept-encoding': 'gzip' });
  assert.equal(hashes.status, 200);
  assert.equal(hashes.headers['content-encoding'], undefined);
  assert.equal(hashes.body.length, 256 * 32);
});

test('partial tiles: every width up to the tree\'s, a prefix of the wider ones, and immutable', async () => {
  const full = await fetchBytes(tilePath(0, 2, 8)); // 520 = 2·256 + 8
  assert.equal(full.status, 200);
  const narrow = await fetchBytes(tilePath(0, 2, 3));
  assert.equal(narrow.status, 200);
  assert.ok(narrow.body.equals(full.body.subarray(0, 96)));
  assert.equal((await fetchBytes(tilePath(0, 2, 9))).status, 404);
  assert.equal((await fetchBytes(tilePath(0, 2))).status, 404, 'the full tile is not there yet');
  assert.equal((await fetchBytes(tilePath('entries', 2, 9))).status, 404);
  // One more leaf: the partial tile served before is unchanged, the wider one now exists.
  const k = newKeyPair();
  const put = await api(srv.url, 'PUT', '/api/v1/me/signing-key', { token: owner.token, body: { public_key: k.publicKeyB64, password: owner.password } });
  assert.ok(put.status === 200 || put.status === 201, put.text);
  assert.ok((await fetchBytes(tilePath(0, 2, 8))).body.equals(full.body));
  const wider = await fetchBytes(tilePath(0, 2, 9));
  assert.equal(wider.status, 200);
  assert.ok(wider.body.subarray(0, 256).equals(full.body));
  assert.equal((await fetchBytes(tilePath('entries', 2, 9))).status, 200);
});

test('tiles beyond the checkpoint are 404, malformed paths 400 naming the part, never 5xx', async () => {
  const notFound = [
    tilePath(0, 3), tilePath(0, 3, 1), tilePath(1, 0), tilePath(1, 1, 1), tilePath(2, 0, 1),
    'tile/7/000.p/1', 'tile/8/000', 'tile/63/000', 'tile/0/x999/x999/x999/x999/x999/999',
    'tile/entries/x999/x999/x999/x999/x999/999', 'tile/entries/003', 'tile/0/x072/x057/x594/x037/x927/935',
  ];
  for (const p of notFound) {
    const r = await fetchBytes(p);
    assert.equal(r.status, 404, `${p}: ${r.status} ${r.body}`);
    assert.match(r.headers.get('content-type'), /^application\/problem\+json/);
    assert.equal(r.headers.get('cache-control'), 'no-store');
  }
  const bad = {
    'tile/64/000': 'level', 'tile/07/000': 'level', 'tile/-1/000': 'level', 'tile/data/000': 'level',
    'tile/0/x1/234': 'index', 'tile/0/1234': 'index', 'tile/0/x000/001': 'index', 'tile/0/01': 'index',
    'tile/0/x001/x002/x003/x004/x005/x006/007': 'index', 'tile/0/18446744073709551616': 'index',
    'tile/0/000.p/0': 'width', 'tile/0/000.p/256': 'width', 'tile/0/000.p/08': 'width',
    'tile/0/000.p/1000': 'width', 'tile/0/000.p/1/2': 'width',
    'tile/entries/x1/234': 'index', 'tile/entries/000.p/256': 'width', 'tile/entries/000.p/0': 'width',
  };
  for (const [p, part] of Object.entries(bad)) {
    const r = await fetchBytes(p);
    assert.equal(r.status, 400, `${p}: ${r.status} ${r.body}`);
    const problem = JSON.parse(r.body.toString());
    assert.equal(problem.part, part, `${p}: ${r.body}`);
    assert.match(problem.detail, new RegExp(part));
  }
  // Empty segments and paths that stop short match no route.
  for (const p of ['tile/0/', 'tile/0/000/', 'tile/0/x001//000', 'tile/entries', 'tile/0']) {
    const r = await fetchBytes(p);
    assert.ok(r.status === 404 || r.status === 400, `${p}: ${r.status}`);
  }
});

test('hash tiles are public, entry bundles only for the log\'s readers', async () => {
  const admin = mintToken(srv, 'admin');
  const team = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name: 'tiles' } });
  assert.equal(team.status, 201, team.text);
  const member = addUser(srv, 'tom', 'team', ['tiles']);
  // A generic monitor follows the log without credentials: checkpoint and hash tiles.
  assert.equal((await fetchBytes(tilePath(0, 0), null)).status, 200);
  assert.equal((await fetchBytes(tilePath(0, 0), member.token)).status, 200);
  assert.equal((await fetchBytes(tilePath('entries', 0), null)).status, 401);
  assert.equal((await fetchBytes(tilePath('entries', 0), member.token)).status, 403);
  assert.equal((await fetchBytes(tilePath('entries', 0), admin)).status, 200);
  assert.equal((await fetchBytes(tilePath(0, 0), owner.token)).status, 200);
});

test('CAPLEDGER_LOG_PUBLIC=0 keeps the whole log for auditors, owners and admins', async () => {
  const closed = await startServer({ env: { CAPLEDGER_LOG_PUBLIC: '0' } });
  try {
    const admin = mintToken(closed, 'admin');
    for (const p of ['/api/v1/log/checkpoint', '/api/v1/log/key', '/api/v1/log/tile/0/000.p/1',
                     '/api/v1/log/proof/consistency?first=1&second=1']) {
      assert.equal((await api(closed.url, 'GET', p)).status, 401, p);
    }
    assert.equal((await api(closed.url, 'GET', '/api/v1/log/checkpoint', { token: admin })).status, 200);
  } finally {
    await closed.stop();
  }
});
