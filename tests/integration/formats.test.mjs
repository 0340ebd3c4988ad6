// The evidence formats of each upload kind are declared once, in core/formats/formats.h, and
// printed by `capledger formats`; the copies that cannot read C are tied to it here:
// api/openapi.yaml's ?format= enums of the upload routes and the `format` enums of their
// replies, and the UI's upload form (static/js/views/evidence.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectDir } from './lib/harness.mjs';

const bin = process.env.CAPLEDGER_BIN || path.join(projectDir, 'build', 'capledger');

function tables() {
  const r = spawnSync(bin, ['formats'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = {};
  for (const line of r.stdout.trim().split('\n')) {
    const [kind, ...names] = line.split(' ');
    out[kind] = names;
  }
  return out;
}

const enumOf = (line) => {
  const m = line.match(/enum: \[([^\]]*)\]/);
  return m ? m[1].split(',').map((s) => s.trim()) : null;
};

// The upload route of each kind (the route whose ?format= takes the kind's list) and the reply
// schema that echoes the format, where there is one.
const ROUTES = {
  runs: 'POST /api/v1/runs',
  telemetry: 'POST /api/v1/benchmarks/{id}/telemetry',
  loadtest: 'POST /api/v1/benchmarks/import',
  offers: 'POST /api/v1/offers/import',
};
const REPLIES = { telemetry: 'TelemetryUploaded', offers: 'OfferCatalogImport' };

// The spec's layout (as openapi.test.mjs reads it): paths at indent 2, methods at indent 4,
// component schemas at indent 4 under `schemas:`.
function specFormats() {
  const text = fs.readFileSync(path.join(projectDir, 'api/openapi.yaml'), 'utf8');
  const params = {};
  const replies = {};
  let top = null;
  let current = null;
  let op = null;
  let schema = null;
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) top = line.replace(/:.*/, '');
    const p = line.match(/^ {2}(\/\S*):\s*$/);
    if (top === 'paths' && p) { current = p[1]; continue; }
    const m = line.match(/^ {4}(get|put|post|delete|patch):\s*$/);
    if (top === 'paths' && m) { op = `${m[1].toUpperCase()} ${current}`; continue; }
    const s = line.match(/^ {4}([A-Za-z0-9_]+):\s*$/);
    if (top === 'components' && s) { schema = s[1]; continue; }
    if (top === 'paths' && /\{name: format, in: query\b/.test(line)) params[op] = enumOf(line);
    if (top === 'components' && /^ {8}format: \{type: string, enum:/.test(line)) replies[schema] = enumOf(line);
  }
  return { params, replies };
}

test('capledger formats lists every upload kind, each with at least one format', () => {
  const t = tables();
  assert.deepEqual(Object.keys(t).sort(), Object.keys(ROUTES).sort());
  for (const names of Object.values(t)) assert.ok(names.length > 0);
});

test("api/openapi.yaml's format enums are the formats table", () => {
  const t = tables();
  const { params, replies } = specFormats();
  for (const [kind, op] of Object.entries(ROUTES))
    assert.deepEqual(params[op], t[kind], `?format= of ${op}`);
  // No other route takes a ?format= of evidence formats the table does not know.
  const known = new Set(Object.values(t).flat());
  for (const [op, values] of Object.entries(params))
    if (!Object.values(ROUTES).includes(op) && values)
      assert.ok(values.every((v) => !known.has(v)), `${op} names evidence formats`);
  for (const [kind, schema] of Object.entries(REPLIES))
    assert.deepEqual(replies[schema], t[kind], `format of ${schema}`);
});

test("the UI's upload form offers the formats of the table", () => {
  const t = tables();
  const js = fs.readFileSync(path.join(projectDir, 'static/js/views/evidence.js'), 'utf8');
  // Each `select([[value, label], …])` of a field named format: its values but '' (detect,
  // or the kind's default media type).
  const selects = {};
  for (const line of js.split('\n')) {
    const m = line.match(/const (\w+) = field\([^]*select\(\[(.*)\]\), \{ name: 'format' \}\)/);
    if (!m) continue;
    selects[m[1]] = [...m[2].matchAll(/\['([^']*)', /g)].map((x) => x[1]).filter((v) => v !== '');
  }
  assert.deepEqual(selects.teleFormat, t.telemetry, 'telemetry upload form');
  assert.deepEqual(selects.ltFormat, t.loadtest, 'load-test upload form');
  assert.deepEqual(selects.priceFormat, t.offers, 'price upload form');
  const tools = js.match(/const TOOL_NAMES = \{([^}]*)\}/);
  assert.ok(tools, 'TOOL_NAMES in evidence.js');
  const toolKeys = [...tools[1].matchAll(/'?([\w-]+)'?:/g)].map((x) => x[1]);
  assert.deepEqual(toolKeys, t.loadtest, 'the load-test tools named in the UI');
});
