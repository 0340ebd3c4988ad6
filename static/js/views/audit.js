// The auditor's view of the signed log: the latest checkpoint and the server's verifier key,
// the decisions as logged (decoded from the leaves themselves), the audit bundle, and an
// in-browser check of any one leaf. The authoritative check is offline `capledger verify`.
import { h, field, alertBox, notice, busy, copyButton, idButton } from '../dom.js';
import { table } from '../listing.js';
import { request, get, listAll } from '../api.js';
import { fromBase64 } from '../bytes.js';
import { fetchVerifierKey, checkLeaf } from '../inclusion.js';
import { parseCheckpointBody, splitNote } from '../logcheck.js';
import { dateTime } from '../format.js';

const PAGE = 100;
// The name the download link gives the bundle; the offline command below uses the same one.
export const BUNDLE_FILE = 'capledger-audit-bundle.json';

// The offline check as commands that run as written in the capledger checkout (build/capledger
// is what scripts/run builds): the verifier key shown on this page saved to a file, then verify
// of the bundle where the browser saved it.
export function verifyCommand(vkey) {
  const quoted = `'${vkey.replace(/'/g, `'\\''`)}'`;
  return `printf '%s\\n' ${quoted} > server.vkey\nbuild/capledger verify ~/Downloads/${BUNDLE_FILE} --key server.vkey\n`;
}

function verifyOffline(vkey) {
  const cmd = verifyCommand(vkey);
  const pre = h('pre', { class: 'code small', 'data-testid': 'verify-command' }, cmd);
  return [
    h('h4', null, 'Check it offline'),
    h('p', null, 'In the capledger checkout (where ', h('code', null, 'scripts/run'), ' built ', h('code', null, 'build/capledger'),
      '), run these two lines. They save the verifier key shown above and check the bundle against it; if your browser saves downloads elsewhere than ',
      h('code', null, '~/Downloads'), ', change the path. It prints ', h('code', null, 'verified: …'), ' and exits 0 only when everything verifies.'),
    pre,
    copyButton(cmd, { label: 'Copy the commands', select: pre, testid: 'copy-command' }),
  ];
}

function decodeLeaf(b64) {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64(b64)));
  } catch {
    return null;
  }
}

function leafList(data) {
  const list = Array.isArray(data) ? data : data.leaves || data.items || data.entries || [];
  return list.map((x) => (typeof x === 'string' ? x : x.leaf || x.leaf_base64 || x.data));
}

function stepsView(r) {
  return h('div', { class: 'check-result', 'data-testid': 'inclusion-result', 'data-ok': String(r.ok) },
    r.ok ? notice('Everything checked out in this browser.', 'success') : alertBox('The check failed.'),
    h('ol', { class: 'steps' }, r.steps.map((s) => h('li', { class: s.ok ? 'ok' : 'bad' },
      h('span', { class: 'mark', 'aria-hidden': 'true' }, s.ok ? '✓' : '✗'), h('strong', null, s.label), s.detail ? ` — ${s.detail}` : ''))));
}

export async function renderAudit(root, ctx) {
  root.append(h('h2', null, 'Signed decision log'),
    notice(h('span', null, 'The checks on this page run in your browser for convenience. The authoritative check is ',
      h('code', null, 'build/capledger verify'), ' of the audit bundle, run offline on a machine you trust (the command is under ', h('a', { href: '#bundle-title' }, 'Audit bundle'), '): it checks every signature, recomputes the root over all leaves and every cited comparison.')));

  const cpBox = h('section', { class: 'card', 'aria-labelledby': 'cp-title' }, h('h3', { id: 'cp-title' }, 'Latest checkpoint'));
  const entriesBox = h('section', { class: 'card', 'aria-labelledby': 'entries-title' }, h('h3', { id: 'entries-title' }, 'Entries'));
  const idx = field('Leaf index', h('input', { type: 'number', min: 0, step: 1, value: '0', required: true, class: 'narrow' }), { name: 'leaf_index' });
  const checkBtn = h('button', { type: 'submit', class: 'primary' }, 'Check inclusion');
  const checkOut = h('div', { 'aria-live': 'polite' });
  const checkForm = h('form', { class: 'card', 'aria-labelledby': 'check-title' },
    h('h3', { id: 'check-title' }, 'Check one decision'),
    h('p', { class: 'hint' }, 'Verifies the checkpoint signature, the leaf\'s inclusion proof (SHA-256 in this browser), and the approver\'s Ed25519 signature over the record.'),
    idx.wrap, checkBtn, checkOut);
  checkForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(checkBtn, async () => {
      checkOut.replaceChildren(h('p', { class: 'loading' }, 'Checking…'));
      checkOut.replaceChildren(stepsView(await checkLeaf(Number(idx.control.value))));
    });
  });
  const offline = h('div', { 'data-testid': 'verify-offline' });
  const bundle = h('section', { class: 'card', 'aria-labelledby': 'bundle-title' },
    h('h3', { id: 'bundle-title' }, 'Audit bundle'),
    h('p', null, 'The checkpoint, the verifier key, every leaf, the approvers\' keys and every cited comparison with its inputs — everything ', h('code', null, 'capledger verify'), ' needs.'),
    h('a', { class: 'button', href: '/api/v1/audit/bundle', download: BUNDLE_FILE, 'data-testid': 'bundle-link' }, 'Download the audit bundle'),
    offline);
  root.append(cpBox, checkForm, bundle, entriesBox);

  let size = 0;
  try {
    const [note, vkey] = await Promise.all([request('GET', '/log/checkpoint', { raw: true }).then((r) => r.data), fetchVerifierKey()]);
    const body = parseCheckpointBody(splitNote(note).text);
    size = body.size;
    cpBox.append(
      h('dl', { class: 'facts' },
        h('dt', null, 'Origin'), h('dd', null, body.origin),
        h('dt', null, 'Tree size'), h('dd', { 'data-testid': 'tree-size' }, String(body.size)),
        h('dt', null, 'Verifier key'), h('dd', null, h('code', { class: 'hash', 'data-testid': 'verifier-key' }, vkey), ' ',
          copyButton(vkey, { label: 'Copy key', testid: 'copy-key' }))),
      h('pre', { class: 'code small', 'data-testid': 'checkpoint' }, note));
    offline.append(...verifyOffline(vkey));
  } catch (e) {
    cpBox.append(alertBox(`Checkpoint unavailable: ${e.message}`));
  }
  if (ctx.stale()) return;
  if (size === 0) {
    entriesBox.append(h('p', { class: 'empty' }, 'The log is empty.'));
    checkBtn.disabled = true;
    return;
  }
  idx.control.max = String(size - 1);
  idx.control.value = String(size - 1);
  const more = h('button', { type: 'button' }, 'Show earlier entries');
  const rows = [];
  const tableBox = h('div');
  let end = size;
  // Reviews by title (the leaf holds the id, which stays visible for copying).
  const titles = new Map((await listAll('/reviews', {}, 500).catch(() => [])).map((r) => [r.id, r.title]));
  async function loadPage() {
    const start = Math.max(0, end - PAGE);
    const { data } = await get('/log/entries', { start, end });
    const leaves = leafList(data);
    const page = leaves.map((b64, i) => ({ index: start + i, leaf: decodeLeaf(b64) })).reverse();
    rows.push(...page);
    end = start;
    more.hidden = end === 0;
    // A leaf is a decision ({record, …}) or a key event ({kind: key_enrol|key_revoke, key_id,
    // owner, at}); one that does not decode is shown as unreadable.
    const rec = (r) => (r.leaf && r.leaf.record) || null;
    const KIND = { key_enrol: 'key enrolled', key_revoke: 'key revoked' };
    tableBox.replaceChildren(table([
      { label: 'Leaf', class: 'num', value: (r) => String(r.index) },
      { label: 'Entry', value: (r) => (rec(r) ? h('span', { class: `decision decision-${rec(r).decision}` }, rec(r).decision)
        : r.leaf && r.leaf.kind ? h('span', { title: r.leaf.key_id }, KIND[r.leaf.kind] || r.leaf.kind) : 'unreadable') },
      { label: 'Chosen option', value: (r) => (rec(r) && rec(r).chosen_option) || '—' },
      { label: 'Review', value: (r) => (rec(r) ? [h('a', { href: `#/reviews/${encodeURIComponent(rec(r).review_id)}` }, titles.get(rec(r).review_id) || 'a review'), ' ', idButton(rec(r).review_id, { what: 'the review' })] : '') },
      { label: 'Owner', value: (r) => (rec(r) ? rec(r).owner : (r.leaf && r.leaf.owner) || '') },
      { label: 'Received', value: (r) => (rec(r) ? dateTime(r.leaf.received_at) : r.leaf && r.leaf.at ? dateTime(r.leaf.at) : ''), date: (r) => (rec(r) ? r.leaf.received_at : r.leaf && r.leaf.at) },
      { label: 'Record', value: (r) => (rec(r) ? h('a', { href: `#/decisions/${encodeURIComponent(rec(r).id)}` }, 'full record') : '') },
      { label: 'Check', value: (r) => h('button', { type: 'button', class: 'link', onclick: () => { idx.control.value = String(r.index); checkForm.requestSubmit(); } }, `check leaf ${r.index}`) },
    ], rows, { caption: `Newest first, ${rows.length} of ${size}` }));
  }
  more.addEventListener('click', () => busy(more, loadPage));
  entriesBox.append(tableBox, more);
  try {
    await loadPage();
  } catch (e) {
    entriesBox.append(alertBox(`Entries unavailable: ${e.message}`));
  }
}
