// The README's commands, as written: every fenced block marked `<!-- readme-test: NAME -->` is
// extracted from README.md and docs/*.md (the README's quick start continues in
// docs/first-tasks.md) and run by bash against a fresh `scripts/run`. Only the environment
// differs from a reader's terminal: scripts/run serves on a free port (the blocks' 127.0.0.1:8080
// is rewritten to it), keeps its state in a scratch CAPLEDGER_VAR_DIR, and uses a fresh database
// of the throwaway cluster (CAPLEDGER_DATABASE_URL given to scripts/run only: the CLI commands
// of the blocks must find it themselves, through the var/capledger.env that scripts/run writes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, projectDir, psql, withDatabase } from './lib/harness.mjs';

// { NAME: text of the sh block that follows the marker }
function documentationText() {
  const docs = fs.readdirSync(path.join(projectDir, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => path.join('docs', f))]
    .map((f) => fs.readFileSync(path.join(projectDir, f), 'utf8')).join('\n');
}

export function readmeBlocks(text = documentationText()) {
  const blocks = {};
  const re = /<!-- readme-test: ([a-z0-9-]+) -->\s*\n```sh\n([\s\S]*?)\n```/g;
  for (const m of text.matchAll(re)) blocks[m[1]] = (blocks[m[1]] ? blocks[m[1]] + '\n' : '') + m[2];
  return blocks;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function cleanEnv(extra) {
  const env = { ...process.env, ...extra };
  for (const k of ['CAPLEDGER_DATABASE_URL', 'CAPLEDGER_URL', 'CAPLEDGER_TOKEN', 'CAPLEDGER_LISTEN']) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

test('README: quick start, first steps and evidence commands run as written', { timeout: 240_000 }, async () => {
  const blocks = readmeBlocks();
  for (const name of ['serve', 'first-steps', 'evidence', 'auditors', 'accounts']) assert.ok(blocks[name], `neither README.md nor docs/ has a readme-test block '${name}'`);
  const port = await freePort();
  const local = (s) => s.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-readme-'));
  const db = 't_' + randomBytes(6).toString('hex');
  psql(`CREATE DATABASE ${db}`);
  const log = path.join(varDir, 'run.log');
  const logFd = fs.openSync(log, 'a');
  const run = spawn('bash', ['-c', local(blocks.serve)], {
    cwd: projectDir,
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: cleanEnv({
      CAPLEDGER_VAR_DIR: varDir,
      CAPLEDGER_LISTEN: `127.0.0.1:${port}`,
      CAPLEDGER_DATABASE_URL: withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, db),
    }),
  });
  fs.closeSync(logFd);
  const exited = new Promise((resolve) => run.on('exit', (code, signal) => resolve({ code, signal })));
  const envFile = path.join(varDir, 'capledger.env');
  try {
    // scripts/run checks its packages and the build, writes capledger.env, then serves.
    let up = false;
    for (let i = 0; i < 600 && !up; i++) {
      try {
        up = fs.existsSync(envFile) && (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      } catch { /* not yet */ }
      if (!up) await sleep(200);
    }
    assert.ok(up, `scripts/run did not serve:\n${fs.readFileSync(log, 'utf8').slice(-3000)}`);
    assert.equal(fs.statSync(envFile).mode & 0o777, 0o600);

    const script = ['set -euo pipefail', local(blocks['first-steps']), local(blocks.evidence), 'echo', local(blocks.auditors), local(blocks.accounts)].join('\n');
    const r = spawnSync('bash', ['-c', script], {
      cwd: projectDir, encoding: 'utf8', timeout: 180_000, env: cleanEnv({ CAPLEDGER_VAR_DIR: varDir }),
    });
    assert.equal(r.status, 0, `the README's commands failed (${r.status}):\n${r.stderr}\n${r.stdout.slice(-3000)}`);
    assert.match(r.stdout, /"username":"ana"/, 'GET /me answers as ana');
    assert.match(r.stdout, /"gpu_hours"/, 'the usage report is printed');
    assert.match(r.stdout + r.stderr, /verified/, 'the auditor block verifies the bundle with the key it fetched');
    assert.match(r.stdout, /\{"created":36,"unchanged":0,"skipped_cpu_only":2\}/, 'the SkyPilot catalog is imported');
    // The usage report (the block's last output) is priced by the fox map, in the offer's USD;
    // the one ifi_accel GPU run has no entry in the map, so the report names it as unpriced.
    // (curl adds no newline after a reply: the report starts at the last '{"currency":' and ends at
    // the newline echoed before the auditors' block)
    const from = r.stdout.lastIndexOf('{"currency":');
    const usage = JSON.parse(r.stdout.slice(from, r.stdout.indexOf('\n', from)));
    assert.equal(usage.currency, 'USD', r.stdout.slice(-2000));
    const priced = usage.groups.filter((g) => g.cost);
    assert.ok(priced.length > 0 && priced.every((g) => g.cost.amount > 0), JSON.stringify(usage));
    assert.deepEqual(usage.unpriced.map((u) => [u.cluster, u.partition]), [['fox', 'ifi_accel']]);
    // docs/auth.md's account block: the disable signs its key events with the server's key,
    // which the CLI finds through capledger.env like the database.
    assert.match(r.stdout, /"username":"ana".*"disabled_at":"[^"]+".*"signing_keys_logged":true/);

    // Away from scripts/run's capledger.env, a command says what it tried and what to set.
    const lost = spawnSync(path.join(projectDir, 'build', 'capledger'), ['team', 'add', 'nlp'], {
      cwd: projectDir, encoding: 'utf8', timeout: 60_000,
      env: cleanEnv({ CAPLEDGER_VAR_DIR: path.join(varDir, 'nothing-here') }),
    });
    assert.equal(lost.status, 1);
    assert.match(lost.stderr, /cannot reach the database dbname=capledger \(from the default: CAPLEDGER_DATABASE_URL is not set\)/);
    assert.match(lost.stderr, /set CAPLEDGER_DATABASE_URL/);
    assert.match(lost.stderr, /nothing-here\/capledger\.env/);
  } finally {
    try { process.kill(-run.pid, 'SIGTERM'); } catch { /* gone */ }
    const timer = setTimeout(() => { try { process.kill(-run.pid, 'SIGKILL'); } catch { /* gone */ } }, 20_000);
    const status = await exited;
    clearTimeout(timer);
    assert.ok(!fs.existsSync(envFile), 'scripts/run removes capledger.env when its server stops');
    try { psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`); } catch { /* cluster gone */ }
    fs.rmSync(varDir, { recursive: true, force: true });
    assert.ok(status.code === 0 || status.code === 143, `scripts/run ended with ${JSON.stringify(status)}`);
  }
});

test('the offline compare explains that stored ids resolve only on the server', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-compare-'));
  try {
    const file = path.join(dir, 'scenario.json');
    fs.writeFileSync(file, JSON.stringify({
      kind: 'training',
      workload: '0b7e3c1e-6a51-4c55-9a43-6f6f0d0c2b11',
      options: [{ name: 'a', offer: '5d1f1c9e-1f7b-4a4e-8a47-1c1f6c0d9e22', benchmark: '7e0f0a3c-9b2d-4f6e-8d1c-2a3b4c5d6e7f' }],
    }));
    const r = spawnSync(path.join(projectDir, 'build', 'capledger'), ['compare', file], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /stored ids only resolve on the server/);
    assert.match(r.stderr, /\/workload: names the stored workload '0b7e3c1e-6a51-4c55-9a43-6f6f0d0c2b11' by id/);
    assert.match(r.stderr, /\/options\/0\/offer: names the stored offer/);
    assert.match(r.stderr, /\/options\/0\/benchmark: names the stored benchmark/);
    assert.match(r.stderr, /POST \/api\/v1\/scenarios\/\{id\}\/comparisons/);
    assert.doesNotMatch(r.stderr, /must be an object/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
