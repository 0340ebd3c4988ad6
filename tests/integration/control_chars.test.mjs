// Terminal escapes (issue 25, item 9): ESC and BEL were accepted in text fields and printed raw
// by `capledger import` (an owner's offer name could retitle and clear a team member's
// terminal). Now the field validator refuses control characters (422 naming the field; free
// text may hold line feeds and tabs), and the CLI escapes whatever a server sends it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { bin } from './lib/cli.mjs';
import { evidenceServer, makeOffer } from './evidence.lib.mjs';

let env;
before(async () => { env = await evidenceServer(); });
after(async () => { await env?.srv.stop(); });

const OFFER = {
  provider: 'aws', region: 'us-east-1', instance_type: 'p5.48xlarge', gpu_model: 'H100-80GB',
  gpus_per_instance: 8, gpu_memory_gb: 80, purchase_option: 'on_demand', price_per_hour: 98.32, currency: 'USD',
};

test('control characters in a text field are refused with 422 naming the field', async () => {
  const { as } = env;
  for (const name of ['evil\x1b]0;owned\x07', 'clear\x1b[2J', 'two\nlines', 'csi\u009b2J', 'del\x7f']) {
    const r = await as('owner1', 'POST', '/offers', { body: { ...OFFER, name } });
    assert.equal(r.status, 422, `${JSON.stringify(name)}: ${r.text}`);
    assert.equal(r.json.errors[0].pointer, '/name', r.text);
    assert.match(r.json.errors[0].message, /control characters \(U\+00[0-9A-F]{2} at byte \d+\)/);
  }
  // a price sheet's cell is the same field
  const sheet = 'name,provider,region,instance_type,gpu_model,gpus_per_instance,gpu_memory_gb,purchase_option,price_per_hour,currency\n' +
    'x\x1b[2J,aws,us-east-1,p5,H100,8,80,on_demand,98.3,USD\n';
  const csv = await as('owner1', 'POST', '/offers', { body: sheet, headers: { 'Content-Type': 'text/csv' } });
  assert.equal(csv.status, 422, csv.text);
  assert.equal(csv.json.errors[0].line, 2);
  // text that is text still goes in (é, €, a no-break space)
  const ok = await makeOffer(as, { name: 'café € 2\u00a0GPUs' });
  assert.equal(ok.name, 'café € 2\u00a0GPUs');
});

test('free text may hold line feeds and tabs, never ESC or a carriage return', async () => {
  const { as } = env;
  // a review's question is free text (2,000 bytes); its title is one line
  const review = (title, question) => as('owner1', 'POST', '/reviews', {
    body: { title, question, owner: 'owner1', started_on: '2026-01-05', workload_ids: [] },
  });
  const faults = (r) => (r.json?.errors || []).map((e) => `${e.pointer} ${e.message}`).join('; ');
  const multi = await review('Q1 capacity', 'Which arrangement?\n\tSee the notes.');
  assert.ok(!/control/.test(faults(multi)), multi.text);
  for (const [title, question, pointer, code] of [
    ['Q1 capacity', 'Which\x1b[2J arrangement?', '/question', '001B'],
    ['Q1 capacity', 'Which\r arrangement?', '/question', '000D'],
    ['two\nlines', 'Which arrangement?', '/title', '000A'],
  ]) {
    const r = await review(title, question);
    assert.equal(r.status, 422, r.text);
    assert.ok(r.json.errors.some((e) => e.pointer === pointer && e.message.includes(`U+${code}`)), r.text);
  }
});

// `capledger import` against a server that answers with control characters everywhere (an old
// database's rows, or a hostile server): nothing reaches the terminal raw.
test('capledger import escapes control characters in every reply it prints', async () => {
  const evil = 'x\x1b]0;owned\x07\x1b[2J\x7f\u009b2J';
  const replies = [
    [422, 'application/problem+json', JSON.stringify({ type: 'about:blank', title: `Invalid ${evil}`, status: 422, detail: `bad ${evil}`, errors: [{ pointer: `/name${evil}`, message: `offer ${evil}`, line: 2 }] })],
    // a body as JCS writes it: C0 escaped, DEL and C1 raw (valid JSON either way)
    [201, 'application/json', '{"id":"1","name":"x\\u001b]0;owned\\u0007 \x7f\u009b2J","rejected":[{"line":3,"pointer":"","message":"m\\u001b[2J\\u0007"}],"rejected_total":1}'],
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'capledger-ctl-'));
  const file = path.join(dir, 'runs.csv');
  fs.writeFileSync(file, 'JobIDRaw|State\n1|COMPLETED\n');
  let next = 0;
  const fake = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [status, type, body] = replies[next++ % replies.length];
      res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${fake.address().port}`;
  const run = () => new Promise((resolve) => {
    const child = spawn(bin, ['import', 'runs', file, '--param', 'cluster=c'], { env: { ...process.env, CAPLEDGER_URL: url, CAPLEDGER_TOKEN: 'tok_test' } });
    const out = [], err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
  });
  try {
    for (const expectCode of [1, 0]) {
      const r = await run();
      assert.equal(r.code, expectCode, r.stderr.toString());
      for (const [name, bytes] of [['stdout', r.stdout], ['stderr', r.stderr]]) {
        for (const bad of [0x1b, 0x07, 0x7f]) assert.equal(bytes.indexOf(bad), -1, `${name} holds 0x${bad.toString(16)}: ${JSON.stringify(bytes.toString())}`);
        assert.equal(bytes.indexOf(Buffer.from('\u009b')), -1, `${name} holds U+009B`);
      }
      assert.match(r.stderr.toString(), /\\u001b/);
    }
  } finally {
    fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('U+0000 anywhere in a JSON body is 422 with its line and column, as docs/ledger-format.md says', async () => {
  const { as } = env;
  // As written on the wire: the JSON escape \u0000 (valid JSON, refused for what it holds).
  const body = `{"name": "nul\\u0000name", "provider": "aws"}`;
  const r = await as('owner1', 'POST', '/offers', { body, headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 422, r.text);
  assert.match(r.json.detail, /U\+0000/);
  assert.equal(r.json.errors[0].pointer, '');
  assert.equal(r.json.errors[0].line, 1);
  assert.ok(r.json.errors[0].column > 0, r.text);
  // A decision record is the case the ledger format names.
  const d = await as('owner1', 'POST', '/decisions', {
    body: '{"record": {"question": "a\\u0000b"}, "signature": "x"}', headers: { 'Content-Type': 'application/json' },
  });
  assert.equal(d.status, 422, d.text);
  assert.match(d.json.detail, /U\+0000/);
});
