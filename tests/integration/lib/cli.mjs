// Runs the capledger CLI against a test server's database (minting tokens, adding users).
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
