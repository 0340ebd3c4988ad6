// Hardening (issue 9): a review's checklist for a team member rests only on what that member
// can see, and CORS is off unless configured.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { api, startServer } from './lib/harness.mjs';
import { mintToken } from './lib/cli.mjs';
import { addOwner, addUser, buildEvidence, createReview } from './ledger.lib.mjs';
import { rawExchange } from './lib/raw.mjs';

let srv;
before(async () => { srv = await startServer(); });
after(async () => { await srv?.stop(); });

describe('checklist scoping', () => {
  test('a review with workloads of two teams: each member\'s checklist uses only its team\'s comparison and evidence', async () => {
    const admin = { name: 'admin', token: mintToken(srv, 'admin') };
    const olga = await addOwner(srv, 'olga');
    const a = await buildEvidence(srv.url, admin, olga, { team: 'alpha' });
    const b = await buildEvidence(srv.url, admin, olga, { team: 'beta', seed: 9 }); // the newest comparison
    const rv = await createReview(srv.url, olga, [a.workloadId, b.workloadId]);
    const member = addUser(srv, 'amy', 'team', ['alpha']);
    const mine = await api(srv.url, 'GET', `/api/v1/reviews/${rv.id}/checklist`, { token: member.token });
    assert.equal(mine.status, 200, mine.text);
    assert.equal(mine.json.comparison_sha256, a.comparison.sha256, 'the member\'s checklist rests on the member\'s comparison');
    const foreign = [b.comparison.sha256, b.runUploadId, b.workloadId, ...Object.values(b.benchmarkIds)];
    for (const id of foreign) assert.ok(!mine.text.includes(id), `the member's checklist names ${id} of the other team: ${mine.text}`);
    // An owner sees every team: the newest comparison of the review's workloads.
    const all = await api(srv.url, 'GET', `/api/v1/reviews/${rv.id}/checklist`, { token: olga.token });
    assert.equal(all.status, 200, all.text);
    assert.equal(all.json.comparison_sha256, b.comparison.sha256);
    // Asking for the other team's comparison by hash answers as if it did not exist.
    const asked = await api(srv.url, 'GET', `/api/v1/reviews/${rv.id}/checklist?comparison=${b.comparison.sha256}`, { token: member.token });
    assert.equal(asked.status, 404, asked.text);
  });
});

describe('CORS and the same-origin check', () => {
  const preflight = (url, origin) => rawExchange(url,
    `OPTIONS /api/v1/teams HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\nAccess-Control-Request-Method: DELETE\r\n` +
    'Access-Control-Request-Headers: x-anything\r\nConnection: close\r\n\r\n');

  test('without configuration: no preflight is granted and no response carries CORS headers', async () => {
    const r = await preflight(srv.url, 'https://evil.example');
    assert.match(r.text, /^HTTP\/1\.1 405 /, r.text);
    assert.doesNotMatch(r.text, /Access-Control-Allow/i);
    const g = await api(srv.url, 'GET', '/healthz', { headers: { Origin: 'https://evil.example' } });
    assert.equal(g.headers['access-control-allow-origin'], undefined);
  });

  test('configured origins, exactly, and only they', async () => {
    const cors = await startServer({ env: { CAPLEDGER_CORS_ORIGINS: 'https://ui.example https://other.example:8443' } });
    try {
      const ok = await preflight(cors.url, 'https://ui.example');
      assert.match(ok.text, /^HTTP\/1\.1 204 /, ok.text);
      assert.match(ok.text, /Access-Control-Allow-Origin: https:\/\/ui\.example\r\n/);
      assert.match(ok.text, /Access-Control-Allow-Methods: GET, POST\r\n/);
      assert.doesNotMatch(ok.text, /x-anything|Access-Control-Allow-Credentials/i);
      for (const o of ['https://ui.example.evil.example', 'http://ui.example', 'https://other.example', 'null']) {
        const no = await preflight(cors.url, o);
        assert.doesNotMatch(no.text, /Access-Control-Allow/i, o);
      }
      const g = await api(cors.url, 'GET', '/healthz', { headers: { Origin: 'https://other.example:8443' } });
      assert.equal(g.headers['access-control-allow-origin'], 'https://other.example:8443');
    } finally {
      await cors.stop();
    }
  });

  test('sign-in from another scheme of the same host and port is refused', async () => {
    const { port } = new URL(srv.url);
    const r = await api(srv.url, 'POST', '/api/v1/session', {
      body: { username: 'olga', password: 'whatever it is here' }, headers: { Origin: `https://127.0.0.1:${port}` },
    });
    assert.equal(r.status, 403, r.text);
    const same = await api(srv.url, 'POST', '/api/v1/session', {
      body: { username: 'nobody-at-all', password: 'whatever it is here' }, headers: { Origin: `http://127.0.0.1:${port}` },
    });
    assert.equal(same.status, 401, same.text);
  });
});
