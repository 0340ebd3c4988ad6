// problem+json `errors` ([{pointer, message}] or upload rejections [{line, pointer, message}])
// as readable lines, and matching them to form fields by JSON Pointer.
import { showFieldError } from './dom.js';

// What people call the fields the API names by JSON Pointer. A pointer a browser shows is
// always turned into words (the pointer stays in the API's answer): a known field by its form
// label, any other by its own name spelled out ("/options/0/offer_id" → "option 1 › offer").
const LABELS = {
  accepted_by: 'Accepted by',
  comparison_sha256: 'Cited comparisons',
  chosen_option: 'Chosen option',
  supersedes: 'Supersedes',
  expected_operating_cost: 'Expected operating cost',
  next_authority_boundary: 'Next authority boundary',
  residual_exposure: 'Residual exposure',
  unresolved_questions: 'Unresolved questions',
  signer_key_id: 'Signing key',
  review_id: 'Review',
  workload_ids: 'Workloads',
  workload_id: 'Workload',
  offer_id: 'Offer',
  benchmark_id: 'Benchmark',
  started_on: 'Started on',
  due_on: 'Due',
  gpu_model: 'GPU model',
  gpus_per_instance: 'GPUs per instance',
  price_per_hour: 'Price per hour',
  workload_class: 'Class',
  purchase_option: 'Purchase option',
  measured_at: 'Measured at',
  submitted_at: 'Submitted',
  idle_below: 'Idle below',
  record: '',
};

function words(name) {
  if (Object.hasOwn(LABELS, name)) return LABELS[name];
  const s = name.replace(/_(id|sha256)$/, '').replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// "/record/accepted_by" → "Accepted by"; "/options/1/offer" → "Options › item 2 › Offer";
// "" (the whole body) → "".
export function fieldName(pointer) {
  if (!pointer) return '';
  const parts = String(pointer).split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.map((t) => (/^\d+$/.test(t) ? `item ${Number(t) + 1}` : words(t))).filter(Boolean).join(' › ');
}

// A message that itself names a pointer ("already mapped at /partitions/0") gets the words too;
// API paths (/api/…) are left alone.
export function plainMessage(message) {
  return String(message ?? '').replace(/\bquery parameter ([a-z_]+)/g, (m, name) => `“${words(name)}”`).replace(/(^|[\s(])(\/(?!api\/)[a-z_][a-z0-9_]*(?:\/[A-Za-z0-9_~]+)*)/g,
    (m, pre, ptr) => `${pre}“${fieldName(ptr)}”`);
}

export function problemText(p) {
  const where = [p.line ? `line ${p.line}` : null, fieldName(p.pointer) || null].filter(Boolean).join(', ');
  return where ? `${where}: ${plainMessage(p.message)}` : plainMessage(p.message);
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
      byField.get(name).push(rest ? `${fieldName(`/${rest}`)}: ${plainMessage(e.message)}` : plainMessage(e.message));
    } else {
      unplaced.push({ ...e, pointer: ptr });
    }
  }
  for (const [name, messages] of byField) showFieldError(fields[name], messages);
  return unplaced;
}
