// The configuration table (server/cmd/config.c): `capledger config --help` lists every
// variable, docs/configuration.md's table names the same ones, a value outside its type or range stops a
// command before it does anything (exit 2, the variable named), and `capledger config` never
// prints a secret. No database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const BIN = process.env.CAPLEDGER_BIN || 'build/capledger';

function run(args, env = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAPLEDGER_')));
  // CAPLEDGER_VAR_DIR points at nothing, so no capledger.env of a running scripts/run is read.
  return spawnSync(BIN, args, { encoding: 'utf8', env: { ...clean, CAPLEDGER_VAR_DIR: '/nonexistent', ...env } });
}

test('config --help lists exactly the variables of docs/configuration.md', () => {
  const r = run(['config', '--help']);
  assert.equal(r.status, 0, r.stderr);
  const listed = [...r.stdout.matchAll(/^(CAPLEDGER_[A-Z_]+) /gm)].map((m) => m[1]).sort();
  const section = fs.readFileSync('docs/configuration.md', 'utf8');
  const documented = [...section.matchAll(/^\| `(CAPLEDGER_[A-Z_]+)` \|/gm)].map((m) => m[1]).sort();
  assert.ok(listed.length >= 15, r.stdout);
  assert.deepEqual(listed, documented);
});

for (const [name, value, words] of [
  ['CAPLEDGER_DB_POOL', 'abc', 'must be a decimal number'],
  ['CAPLEDGER_DB_POOL', '0', 'must be an integer in 1..256'],
  ['CAPLEDGER_THREADS', '16x', 'must be an integer in 8..1024'],
  ['CAPLEDGER_HEADER_TIMEOUT_MS', '100', 'must be an integer in 500..600000'],
  ['CAPLEDGER_SEND_TIMEOUT_MS', '10', 'must be an integer in 500..600000'],
  ['CAPLEDGER_SESSION_IDLE_S', '86401', 'must be an integer in 1..86400'],
  ['CAPLEDGER_DRIFT_SWEEP_S', '-1', 'must be an integer in 0..86400'],
  ['CAPLEDGER_WEBHOOK_TIMEOUT_S', 'nan', 'must be a decimal number'],
  ['CAPLEDGER_WEBHOOK_RETRY_BASE_S', '1e9', 'must be a number in 0.01..3600'],
  ['CAPLEDGER_WEBHOOK_DENY_PRIVATE', 'yes', 'must be 0 or 1'],
]) {
  test(`${name}=${value} refuses to start`, () => {
    for (const command of [['serve'], ['migrate'], ['config']]) {
      const r = run(command, { [name]: value, CAPLEDGER_LISTEN: '127.0.0.1:1' });
      assert.equal(r.status, 2, `${command}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${name}='${value}' is refused: it ${words}`));
    }
  });
}

for (const value of ['nonsense', 'vkey-without-url', 'wa.example+1234+AAAA http://127.0.0.1:1']) {
  test(`CAPLEDGER_WITNESSES=${value} refuses to start serve (exit 2, the variable named)`, () => {
    const r = run(['serve'], { CAPLEDGER_WITNESSES: value, CAPLEDGER_LISTEN: '127.0.0.1:1' });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^capledger: CAPLEDGER_WITNESSES: /m);
  });
}

test('config prints the settings without their secrets', () => {
  const r = run(['config'], {
    CAPLEDGER_DATABASE_URL: 'postgresql://ana:hunter2@db.example:5432/capledger',
    CAPLEDGER_READ_DATABASE_URL: 'host=replica user=ana password=hunter3 dbname=capledger',
    CAPLEDGER_ADMIN_PASSWORD: 'hunter4hunter4',
    CAPLEDGER_TOKEN: 'clt_hunter5',
    CAPLEDGER_DB_POOL: '8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /hunter/);
  assert.match(r.stdout, /^CAPLEDGER_DATABASE_URL=postgresql:\/\/ana:\*\*\*@db\.example:5432\/capledger$/m);
  assert.match(r.stdout, /^CAPLEDGER_READ_DATABASE_URL=host=replica user=ana password=\*\*\* dbname=capledger$/m);
  assert.match(r.stdout, /^CAPLEDGER_ADMIN_PASSWORD=\(secret, set\)$/m);
  assert.match(r.stdout, /^CAPLEDGER_DB_POOL=8$/m);
  assert.match(r.stdout, /^CAPLEDGER_THREADS=256 {2}# default$/m);
});
