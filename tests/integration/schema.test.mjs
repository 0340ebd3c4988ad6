// db/schema.sql is what db/migrations add up to (scripts/schema --write makes it): a migrated
// database's schema must equal the file, so the readable schema never drifts from the
// migrations that are the source.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';

import { migratedTemplate, projectDir, withDatabase } from './lib/harness.mjs';

test('db/schema.sql is the schema of a freshly migrated database', () => {
  const bin = process.env.CAPLEDGER_BIN || path.join(projectDir, 'build', 'capledger');
  const template = migratedTemplate(bin);
  const r = spawnSync(path.join(projectDir, 'scripts', 'schema'),
                      [withDatabase(process.env.CAPLEDGER_TEST_DATABASE_URL, template)],
                      { cwd: projectDir, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  const file = fs.readFileSync(path.join(projectDir, 'db', 'schema.sql'), 'utf8');
  if (r.stdout !== file) {
    const a = file.split('\n');
    const b = r.stdout.split('\n');
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    assert.fail(`db/schema.sql is stale from line ${i + 1} (file: ${JSON.stringify(a[i])}, ` +
                `migrations: ${JSON.stringify(b[i])}): run scripts/schema --write and commit it`);
  }
});
