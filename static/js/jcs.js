// RFC 8785 JSON Canonicalization Scheme for values built in the browser (decision records) and
// for checking leaves an auditor downloads. Strings are escaped exactly as ECMAScript's
// JSON.stringify does (which is what RFC 8785 §3.2.2.2 prescribes) once lone surrogates are
// refused: TextEncoder would silently turn them into U+FFFD, so the bytes signed would not be
// the record the user built. Object keys sort by UTF-16 code units, which is what the default
// Array.prototype.sort comparison of strings does.

export class JcsError extends Error {
  constructor(pointer, message) {
    super(`${pointer || '/'}: ${message}`);
    this.name = 'JcsError';
    this.pointer = pointer;
  }
}

function escapePointerToken(key) {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

// Index of the first lone surrogate in s, or -1.
export function loneSurrogateIndex(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

function serializeString(s, pointer) {
  const bad = loneSurrogateIndex(s);
  if (bad >= 0) throw new JcsError(pointer, `lone surrogate at character ${bad}`);
  return JSON.stringify(s);
}

function serialize(value, pointer, integersOnly, out) {
  if (value === null) {
    out.push('null');
  } else if (value === true || value === false) {
    out.push(value ? 'true' : 'false');
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new JcsError(pointer, 'not a finite number');
    if (integersOnly && !Number.isSafeInteger(value)) {
      throw new JcsError(pointer, 'only integers within ±(2^53 − 1) may appear in a signed record');
    }
    // ECMAScript Number::toString, which JSON.stringify uses, is the JCS number form.
    out.push(JSON.stringify(value));
  } else if (typeof value === 'string') {
    out.push(serializeString(value, pointer));
  } else if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(',');
      serialize(item, `${pointer}/${i}`, integersOnly, out);
    });
    out.push(']');
  } else if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const keys = Object.keys(value).sort();
    out.push('{');
    keys.forEach((key, i) => {
      const child = `${pointer}/${escapePointerToken(key)}`;
      if (i > 0) out.push(',');
      out.push(serializeString(key, child), ':');
      serialize(value[key], child, integersOnly, out);
    });
    out.push('}');
  } else {
    throw new JcsError(pointer, `cannot canonicalize a value of type ${typeof value}`);
  }
}

// The canonical JSON text of value. Throws JcsError naming the JSON Pointer of the first value
// that cannot be canonicalized (lone surrogate, non-finite number, undefined, a class instance;
// with integersOnly, any number that is not a safe integer).
export function canonicalize(value, { integersOnly = false } = {}) {
  const out = [];
  serialize(value, '', integersOnly, out);
  return out.join('');
}
