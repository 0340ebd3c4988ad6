// Scenario names are unique per team (issue 23: a scenario saved twice under its pre-filled
// name listed two identical entries in every picker): a second POST /scenarios with a taken
// name answers 409 naming the scenario that has it and offering a free name; case does not
// make a name new; another team may use it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { api, dataDir, psql, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';

let srv;
let owner;
const doc = () => JSON.parse(fs.readFileSync(path.join(dataDir, 'spec', 'example-training.json'), 'utf8'));

before(async () => {
  srv = await startServer();
  const admin = mintToken(srv, 'admin');
  for (const name of ['llm', 'vision']) {
    const t = await api(srv.url, 'POST', '/api/v1/teams', { token: admin, body: { name } });
    assert.equal(t.status, 201);
  }
  psql(`INSERT INTO app_user (username, role, password_hash) VALUES ('olga', 'owner', 'x')`, { database: srv.db });
  owner = mintToken(srv, 'olga');
});
after(async () => { await srv?.stop(); });

const save = (name, team = 'llm') => api(srv.url, 'POST', '/api/v1/scenarios', { token: owner, body: { name, team, document: doc() } });

test('a taken name answers 409 with the scenario that has it and a free name', async () => {
  const first = await save('Nightly eval');
  assert.equal(first.status, 201, first.text);
  const again = await save('Nightly eval');
  assert.equal(again.status, 409, again.text);
  assert.equal(again.json.existing.id, first.json.id);
  assert.equal(again.json.existing.name, 'Nightly eval');
  assert.equal(again.json.existing.created_by, 'olga');
  assert.equal(again.json.suggested_name, 'Nightly eval (2)');
  assert.equal(again.json.errors[0].pointer, '/name');
  assert.match(again.json.detail, /^team 'llm' already has a scenario named 'Nightly eval' \(stored \d{4}-\d\d-\d\d by olga\): choose another name, such as 'Nightly eval \(2\)'$/);
  // Case does not make a name new; the offered one is free, and then the next is offered.
  assert.equal((await save('NIGHTLY EVAL')).status, 409);
  assert.equal((await save('Nightly eval (2)')).status, 201);
  assert.equal((await save('Nightly eval')).json.suggested_name, 'Nightly eval (3)');
  // Another team may use the name.
  assert.equal((await save('Nightly eval', 'vision')).status, 201);
  const count = psql(`SELECT count(*) FROM scenario WHERE lower(name) = 'nightly eval'`, { database: srv.db });
  assert.equal(count, '2');
});
