// Runs the capledger CLI against a test server's database (minting tokens, adding users), and
// scripts/demo against a test server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { projectDir, withDatabase } from './harness.mjs';

export const bin = process.env.CAPLEDGER_BIN || path.join(projectDir, 'build', 'capledger');

export function cli(srv, args, { input, env = {} } = {}) {
  const r = spawnSync(bin, args, {
    cwd: projectDir,
    encoding: 'utf8',
    input,
    env: {
      ...process.env,
      CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, srv.db),
      ...env,
    },
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// A fresh API token for an existing user (printed once by `capledger token create`).
export function mintToken(srv, username, label = 'test') {
  const r = cli(srv, ['token', 'create', username, '--label', label]);
  if (r.status !== 0) throw new Error(`token create ${username} failed: ${r.stderr}`);
  return r.stdout.trim();
}

// Runs scripts/demo against a test server as a reader of the README would (none of the test's
// CAPLEDGER_ variables, its state in DIR/state, no var/ of the checkout); returns its output.
export function runDemo(srv, dir) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAPLEDGER_')));
  const r = spawnSync(path.join(projectDir, 'scripts', 'demo'), [], {
    cwd: projectDir,
    encoding: 'utf8',
    timeout: 240_000,
    env: {
      ...env,
      CAPLEDGER_URL: srv.url,
      CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, srv.db),
      CAPLEDGER_VAR_DIR: path.join(dir, 'no-var'),
      CAPLEDGER_DEMO_DIR: path.join(dir, 'state'),
      CAPLEDGER_BIN: bin,
    },
  });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, `scripts/demo failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
