// Checks one log leaf in the browser, step by step: the checkpoint's signature by the log's
// verifier key, the leaf's inclusion proof up to that checkpoint's root (RFC 9162), that the
// leaf is canonical JSON, and the approver's Ed25519 signature over its record. A convenience:
// `capledger verify` of the audit bundle, offline, is the authoritative check.
import { request, get } from './api.js';
import { canonicalize } from './jcs.js';
import { fromBase64, fromHex, toHex, sha256 } from './bytes.js';
import { verifyCheckpoint, verifyInclusion, leafHash, ed25519Verify } from './logcheck.js';
import { signedMessage } from './signing.js';

async function text(path) {
  const { data } = await request('GET', path, { raw: true });
  return data;
}

// The verifier key line, whether the server sends it as text or as JSON.
export async function fetchVerifierKey() {
  const body = (await text('/log/key')).trim();
  if (body.startsWith('{')) {
    const o = JSON.parse(body);
    return String(o.verifier_key || o.key || '').trim();
  }
  return body;
}

function leafFromEntries(data) {
  const list = Array.isArray(data) ? data : data.leaves || data.items || data.entries || [];
  const first = list[0];
  if (first === undefined) throw new Error('the log returned no entry at that index');
  return typeof first === 'string' ? first : first.leaf || first.leaf_base64 || first.data;
}

export async function checkLeaf(index) {
  const steps = [];
  const step = (ok, label, detail) => {
    steps.push({ ok, label, detail });
    return ok;
  };
  const result = { ok: false, steps, leaf: null, checkpoint: null };
  try {
    const vkey = await fetchVerifierKey();
    const note = await text('/log/checkpoint');
    const cp = await verifyCheckpoint(note, vkey);
    result.checkpoint = cp;
    step(true, 'Checkpoint signature', `signed by ${cp.origin}; tree size ${cp.size}`);
    if (!step(index < cp.size, 'Leaf inside the tree', `leaf ${index} of ${cp.size}`)) return result;

    const { data: entries } = await get('/log/entries', { start: index, end: index + 1 });
    const leafBytes = fromBase64(leafFromEntries(entries));
    const lh = await leafHash(leafBytes);
    const { data: proof } = await get('/log/proof/inclusion', { index, size: cp.size });
    const hashes = (proof.hashes || []).map(fromHex);
    const included = await verifyInclusion(index, cp.size, lh, hashes, cp.root);
    if (!step(included, 'Inclusion proof', included
      ? `${hashes.length} hashes lead from leaf hash ${toHex(lh).slice(0, 16)}… to the signed root`
      : 'the proof does not lead to the signed root')) return result;

    const leafText = new TextDecoder('utf-8', { fatal: true }).decode(leafBytes);
    const leaf = JSON.parse(leafText);
    result.leaf = leaf;
    if (!step(canonicalize(leaf) === leafText, 'Leaf is canonical (RFC 8785)', '')) return result;
    if (leaf.kind) {
      // A key event (key_enrol / key_revoke): no approver signature; the checkpoint covers it.
      const ok = leaf.kind === 'key_enrol' || leaf.kind === 'key_revoke';
      if (!step(ok, 'Key event', ok ? `${leaf.kind === 'key_enrol' ? 'enrolment' : 'revocation'} of key ${leaf.key_id}${leaf.owner ? ` for ${leaf.owner}` : ''}` : `unknown leaf kind ${leaf.kind}`)) return result;
      result.ok = true;
      return result;
    }

    const pk = fromBase64(leaf.public_key);
    const keyIdOk = toHex(await sha256(pk)) === leaf.record.signer_key_id;
    if (!step(keyIdOk, 'Signer key id', keyIdOk ? leaf.record.signer_key_id : 'signer_key_id is not SHA-256 of the public key')) return result;
    const sigOk = await ed25519Verify(pk, fromBase64(leaf.signature), signedMessage(leaf.record));
    if (!step(sigOk, "Approver's signature", sigOk ? `Ed25519 over "capledger-decision-v1\\n" + JCS(record), by ${leaf.record.owner}` : 'does not verify')) return result;
    result.ok = true;
  } catch (e) {
    step(false, 'Check stopped', e.message);
  }
  return result;
}
