// problem+json `errors` ([{pointer, message}] or upload rejections [{line, pointer, message}])
// as readable lines, and matching them to form fields by JSON Pointer.
import { showFieldError } from './dom.js';

export function problemText(p) {
  const where = [p.line ? `line ${p.line}` : null, p.pointer ? p.pointer : null].filter(Boolean).join(' ');
  return where ? `${where}: ${p.message}` : p.message;
}

export function problemList(errors) {
  return (errors || []).map(problemText);
}

// Shows each error next to the field whose name its pointer starts with (after an optional
// prefix such as "/record"); returns the errors no field claimed.
export function placeFieldErrors(fields, errors, prefix = '') {
  for (const f of Object.values(fields)) showFieldError(f, []);
  const byField = new Map();
  const unplaced = [];
  for (const e of errors || []) {
    let ptr = e.pointer || '';
    if (prefix && ptr.startsWith(prefix)) ptr = ptr.slice(prefix.length);
    const name = ptr.split('/')[1] || '';
    if (fields[name]) {
      if (!byField.has(name)) byField.set(name, []);
      const rest = ptr.split('/').slice(2).join('/');
      byField.get(name).push(rest ? `${rest}: ${e.message}` : e.message);
    } else {
      unplaced.push({ ...e, pointer: ptr });
    }
  }
  for (const [name, messages] of byField) showFieldError(fields[name], messages);
  return unplaced;
}
