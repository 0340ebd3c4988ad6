// Shared set-up of the evidence tests: a server, two teams and one user of each role.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { api, dataDir, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';

export const SAMPLES = path.join(dataDir, 'samples');
export const sample = (rel) => fs.readFileSync(path.join(SAMPLES, rel));

// Starts a server with teams vision and nlp and the users owner1 (owner), ana (team vision),
// bob (team nlp), aud (auditor) and the admin; returns {srv, tokens, as(who, method, path, opts)}.
export async function evidenceServer(opts = {}) {
  const srv = await startServer(opts);
  const tokens = { admin: mintToken(srv, 'admin') };
  for (const name of ['vision', 'nlp']) {
    const t = await api(srv.url, 'POST', '/api/v1/teams', { token: tokens.admin, body: { name } });
    assert.equal(t.status, 201, t.text);
  }
  const users = [['owner1', 'owner', []], ['ana', 'team', ['vision']], ['bob', 'team', ['nlp']], ['aud', 'auditor', []]];
  for (const [username, role, teams] of users) {
    const password = `${username} uses a long password 7`;
    const r = await api(srv.url, 'POST', '/api/v1/users', { token: tokens.admin, body: { username, password, role, teams } });
    assert.equal(r.status, 201, r.text);
    tokens[username] = mintToken(srv, username);
  }
  const as = (who, method, urlPath, opts = {}) =>
    api(srv.url, method, `/api/v1${urlPath}`, { timeoutMs: 60_000, ...opts, token: tokens[who] });
  return { srv, tokens, as };
}

// A text body with its content type.
export const text = (body, type = 'text/csv', headers = {}) => ({ body, headers: { 'Content-Type': type, ...headers } });

export function assertNo5xx(r, what) {
  assert.ok(r.status < 500, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
}

export async function makeWorkload(as, who, fields) {
  const r = await as(who, 'POST', '/workloads', { body: fields });
  assert.equal(r.status, 201, r.text);
  return r.json;
}

export async function makeOffer(as, fields = {}) {
  const r = await as('owner1', 'POST', '/offers', {
    body: {
      provider: 'aws', region: 'us-east-1', instance_type: 'p5.48xlarge', gpu_model: 'H100-80GB',
      gpus_per_instance: 8, gpu_memory_gb: 80, purchase_option: 'on_demand', price_per_hour: 98.32,
      currency: 'USD', ...fields,
    },
  });
  assert.equal(r.status, 201, r.text);
  return r.json;
}
