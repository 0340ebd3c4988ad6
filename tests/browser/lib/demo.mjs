// A server loaded by scripts/demo (its public API only, as a reader of the README would run it)
// for browser tests that need the demo's data: the review with its decision and drift alerts,
// the stored comparisons, the evidence. Returns {srv, passwords, dir, stop()}.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectDir, startServer, withDatabase } from '../../integration/lib/harness.mjs';
import { bin } from '../../integration/lib/cli.mjs';

export const DEMO_REVIEW = 'Evaluation capacity for the 13B regression suite';

export async function startDemo({ env: extra = {} } = {}) {
  const srv = await startServer({ env: { CAPLEDGER_DRIFT_SWEEP_S: '0', ...extra } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-demo-browser-'));
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
  const passwords = Object.fromEntries([...r.stdout.matchAll(/^\s+(demo-\w+)\s+\(\w+\)\s+password (\S+)$/gm)].map((m) => [m[1], m[2]]));
  const tokens = {};
  for (const name of Object.keys(passwords)) {
    const f = path.join(dir, 'state', `${name}.token`);
    if (fs.existsSync(f)) tokens[name] = fs.readFileSync(f, 'utf8').trim();
  }
  return {
    srv,
    dir,
    passwords,
    tokens,
    stdout: r.stdout,
    async stop() {
      await srv.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
