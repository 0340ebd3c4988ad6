// The approver's Ed25519 key, kept in this browser only. The private key is generated
// non-extractable, so neither this code nor the server can ever read it; IndexedDB can store
// the CryptoKeyPair object itself (structured clone) without exposing the key bytes. One key
// per username per browser; the public half is registered with PUT /api/v1/me/signing-key.
import { canonicalize } from './jcs.js';
import { sha256, toBase64, toHex, utf8 } from './bytes.js';

const DB_NAME = 'capledger';
const STORE = 'signing-keys';
export const SIGNING_CONTEXT = 'capledger-decision-v1\n';

function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function withStore(mode, fn) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = fn(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

// {keyPair, publicKey (base64), keyId (hex), registered (bool)} or undefined.
export function loadKey(username) {
  return withStore('readonly', (s) => s.get(username));
}

export function saveKey(username, entry) {
  return withStore('readwrite', (s) => s.put(entry, username));
}

export function forgetKey(username) {
  return withStore('readwrite', (s) => s.delete(username));
}

// A new key pair whose private half cannot be exported, with its raw public key (base64) and
// key id (lower-case hex SHA-256 of the raw 32 bytes, as docs/ledger-format.md defines signer_key_id).
export async function generateKey() {
  const keyPair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', keyPair.publicKey));
  if (raw.length !== 32) throw new Error('the browser exported a public key that is not 32 bytes');
  return { keyPair, publicKey: toBase64(raw), keyId: toHex(await sha256(raw)), registered: false };
}

// The bytes an approver signs: the context line, then JCS(record). Throws (JcsError) before
// anything is signed when the record holds a lone surrogate or a non-integer number.
export function signedMessage(record) {
  return utf8(SIGNING_CONTEXT + canonicalize(record, { integersOnly: true }));
}

// Base64 Ed25519 signature of signedMessage(record).
export async function signRecord(privateKey, record) {
  const message = signedMessage(record);
  const sig = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, message));
  return toBase64(sig);
}
