// In-browser checks of the decision log: RFC 9162 §2.1.3.2 inclusion proofs and the C2SP
// signed-note checkpoint signature. These are a convenience for auditors; the authoritative
// check is `capledger verify` on the audit bundle, run offline on a machine they trust.
import { concat, equalBytes, fromBase64, fromHex, sha256, utf8 } from './bytes.js';

const HASH_BYTES = 32;

export async function leafHash(leafBytes) {
  return sha256(concat(new Uint8Array([0]), leafBytes));
}

async function nodeHash(left, right) {
  return sha256(concat(new Uint8Array([1]), left, right));
}

// RFC 9162 §2.1.3.2. Sizes are JavaScript numbers (exact below 2^53); proof hashes are
// Uint8Arrays. Resolves to true only when the proof leads from leaf to root.
export async function verifyInclusion(leafIndex, treeSize, leafHashBytes, proof, root) {
  if (!Number.isSafeInteger(leafIndex) || !Number.isSafeInteger(treeSize)) return false;
  if (leafIndex < 0 || leafIndex >= treeSize) return false;
  if (leafHashBytes.length !== HASH_BYTES || root.length !== HASH_BYTES) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leafHashBytes;
  for (const p of proof) {
    if (p.length !== HASH_BYTES || sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(r, root);
}

// A tlog-checkpoint body: origin, decimal size, base64 root, each line ending in "\n".
export function parseCheckpointBody(body) {
  const lines = body.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') throw new Error('checkpoint body must end in a newline');
  const [origin, sizeText, rootText] = lines;
  if (!origin) throw new Error('checkpoint has no origin line');
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) {
    throw new Error('checkpoint size is not a decimal number');
  }
  const root = fromBase64(rootText);
  if (root.length !== HASH_BYTES) throw new Error('checkpoint root is not 32 bytes');
  return { origin, size: Number(sizeText), root };
}

// Splits a signed note into its signed text (ending in "\n") and its signature lines.
export function splitNote(note) {
  const at = note.lastIndexOf('\n\n');
  if (at < 0) throw new Error('signed note has no blank line before its signatures');
  const text = note.slice(0, at + 1);
  const sigLines = note.slice(at + 2).split('\n').filter((l) => l !== '');
  return { text, sigLines };
}

// A verifier key "<name>+<hex key id>+<base64(0x01 ‖ public key)>".
export function parseVerifierKey(vkey) {
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey.trim());
  if (!m) throw new Error('verifier key is not <name>+<key id>+<key>');
  const keyBytes = fromBase64(m[3]);
  if (keyBytes.length !== 33 || keyBytes[0] !== 1) throw new Error('verifier key is not an Ed25519 (0x01) key');
  return { name: m[1], keyId: fromHex(m[2]), publicKey: keyBytes.slice(1) };
}

async function ed25519Verify(publicKey, signature, message) {
  const key = await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
}

// Checks that note carries a valid signature by vkey; resolves to the signed text (which ends
// in "\n"). Throws naming what failed.
export async function verifyNoteSignature(note, vkey) {
  const key = parseVerifierKey(vkey);
  const expectId = (await sha256(concat(utf8(key.name), new Uint8Array([0x0a, 0x01]), key.publicKey))).slice(0, 4);
  if (!equalBytes(expectId, key.keyId)) throw new Error('verifier key id does not match its name and key');
  const { text, sigLines } = splitNote(note);
  const prefix = `\u2014 ${key.name} `;
  for (const line of sigLines) {
    if (!line.startsWith(prefix)) continue;
    const sig = fromBase64(line.slice(prefix.length));
    if (sig.length !== 68 || !equalBytes(sig.slice(0, 4), key.keyId)) continue;
    if (!(await ed25519Verify(key.publicKey, sig.slice(4), utf8(text)))) {
      throw new Error('note signature does not verify');
    }
    return { text, name: key.name };
  }
  throw new Error(`no signature by ${key.name} on the note`);
}

// A signed checkpoint: resolves to its body {origin, size, root} once the signature by vkey
// verifies and the origin is the key's name.
export async function verifyCheckpoint(note, vkey) {
  const { text, name } = await verifyNoteSignature(note, vkey);
  const body = parseCheckpointBody(text);
  if (body.origin !== name) throw new Error('checkpoint origin differs from the verifier key name');
  return body;
}

export { ed25519Verify };
