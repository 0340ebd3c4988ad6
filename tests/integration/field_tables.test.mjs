// A column list in SQL that copies a field table cannot read it (the store sees no handler):
// here the copies are tied. The workload UPDATE sets WORKLOAD_CLIENT_COLUMNS
// (server/store/workloads.c); the body's client fields are WORKLOAD_FIELDS
// (server/http/handlers/h_workloads.c); both, with the server's fields, are the columns of the
// workload table (db/schema.sql). A client field missing from the UPDATE would be accepted and
// silently not changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { projectDir } from './lib/harness.mjs';

const read = (p) => fs.readFileSync(path.join(projectDir, p), 'utf8');

// The string literals of a C #define continued over lines, concatenated.
function cDefine(text, name) {
  const m = text.match(new RegExp(`#define ${name}((?:.*\\\\\\n)*.*)`));
  assert.ok(m, `${name} is defined`);
  return [...m[1].matchAll(/"([^"]*)"/g)].map((x) => x[1]).join('');
}

// The names of a struct evfield table: client fields, and the server's (EVF_SERVER_FIELD).
function fieldTable(text, name) {
  const m = text.match(new RegExp(`struct evfield ${name}\\[\\] = \\{([^]*?)\\n\\};`));
  assert.ok(m, `${name} is a field table`);
  const client = [];
  const server = [];
  for (const line of m[1].split('\n')) {
    const s = line.match(/EVF_SERVER_FIELD\("([^"]+)"\)/);
    if (s) { server.push(s[1]); continue; }
    const c = line.match(/^\s*(?:\{|[A-Z_]+\()"([^"]+)"/);
    if (c) client.push(c[1]);
  }
  return { client, server };
}

function tableColumns(schema, table) {
  const m = schema.match(new RegExp(`CREATE TABLE public\\.${table} \\(\\n([^]*?)\\n\\);`));
  assert.ok(m, `table ${table} in db/schema.sql`);
  return m[1].split('\n').map((l) => l.trim()).filter((l) => !l.startsWith('CONSTRAINT'))
    .map((l) => l.split(' ')[0].replace(/"/g, ''));
}

test('the workload UPDATE sets exactly the client fields of the workload field table', () => {
  const columns = cDefine(read('server/store/workloads.c'), 'WORKLOAD_CLIENT_COLUMNS')
    .split(',').map((s) => s.trim());
  const { client, server } = fieldTable(read('server/http/handlers/h_workloads.c'), 'WORKLOAD_FIELDS');
  assert.ok(client.length > 20, `client fields read: ${client.length}`);
  assert.deepEqual(columns, client);
  const table = tableColumns(read('db/schema.sql'), 'workload');
  assert.deepEqual([...table].sort(), [...client, ...server].sort());
});
