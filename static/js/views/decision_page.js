// One decision's whole record (#/decisions/{id}): every field as signed, the signer's name and
// key fingerprint, its leaf in the log with the inclusion proof checked in this browser, the
// comparison it cites (opened in the review's cockpit), and the supersede chain both ways.
import { h, alertBox, notice, idButton } from '../dom.js';
import { get, listAll } from '../api.js';
import { checkLeaf } from '../inclusion.js';
import { dateTime, shortId } from '../format.js';
import { evidenceIndex } from './review_story.js';
import { scorecard } from './scorecard.js';

const LOG_READERS = ['owner', 'auditor', 'admin'];

const text = (v) => (v === null || v === undefined || v === '' ? h('span', { class: 'sub' }, '—') : String(v));
const list = (a) => (Array.isArray(a) && a.length ? h('ul', null, a.map((x) => h('li', null, x))) : text(null));

// Another decision by what it says and when (its id only in a copy button).
async function decisionLink(id) {
  if (!id) return text(null);
  const other = await get(`/decisions/${encodeURIComponent(id)}`).then((x) => x.data).catch(() => null);
  const o = other && (other.record || other);
  const label = o ? `${o.decision}${o.chosen_option ? ` ${o.chosen_option}` : ''} · signed ${dateTime(o.created_at)} by ${o.owner || other.signer}` : 'a decision you cannot read';
  return [h('a', { href: `#/decisions/${encodeURIComponent(id)}` }, label), ' ', idButton(id, { what: 'that decision' })];
}

export async function renderDecision(root, ctx) {
  const id = ctx.params[0];
  const { data: d } = await get(`/decisions/${encodeURIComponent(id)}`);
  if (ctx.stale()) return;
  const r = d.record || {};
  const review = await get(`/reviews/${encodeURIComponent(r.review_id)}`).then((x) => x.data).catch(() => null);
  const cost = r.expected_operating_cost;
  // The cited comparisons by scenario, team and date (the review's stored comparisons).
  const named = new Map((await listAll(`/reviews/${encodeURIComponent(r.review_id)}/comparisons`, {}, 200).catch(() => []))
    .map((c) => [c.sha256, `${c.scenario_name || 'scenario'} · ${c.team} · ${dateTime(c.created_at)}`]));
  const reviewHref = `#/reviews/${encodeURIComponent(r.review_id)}`;
  const check = h('div', { class: 'inclusion-check', 'aria-live': 'polite', 'data-testid': 'decision-inclusion' });

  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/reviews' }, 'Reviews'), ' / ',
      h('a', { href: reviewHref }, review ? review.title : shortId(r.review_id)), ' / decision'),
    h('h2', null, h('span', { class: `decision decision-${r.decision}` }, r.decision), r.chosen_option ? ` — ${r.chosen_option}` : '',
      ' ', h('span', { class: 'status', 'data-testid': 'decision-state' }, d.superseded_by ? 'superseded' : 'current')),
    h('section', { class: 'card', 'aria-labelledby': 'what-title' },
      h('h3', { id: 'what-title' }, 'What was decided'),
      h('dl', { class: 'facts', 'data-testid': 'decision-record' },
        h('dt', null, 'Decision'), h('dd', { 'data-field': 'decision' }, r.decision),
        h('dt', null, 'Review'), h('dd', { 'data-field': 'review_id' }, h('a', { href: reviewHref }, review ? review.title : 'a review you cannot read'), ' ', idButton(r.review_id, { what: 'the review' })),
        h('dt', null, 'Chosen option'), h('dd', { 'data-field': 'chosen_option' }, text(r.chosen_option)),
        h('dt', null, 'Cited comparisons'), h('dd', { 'data-field': 'comparison_sha256' }, (r.comparison_sha256 || []).length
          ? h('ul', null, r.comparison_sha256.map((sha, i) => h('li', null,
            h('a', { href: `${reviewHref}?comparison=${sha}`, 'data-testid': i === 0 ? 'cited-comparison' : null }, i === 0 ? 'the comparison it rests on' : 'also cited'),
            named.has(sha) ? `: ${named.get(sha)}` : '', ' ', idButton(sha, { what: 'the comparison', label: 'Copy SHA-256' }))))
          : text(null)),
        h('dt', null, 'Justification'), h('dd', { 'data-field': 'justification' }, text(r.justification)),
        h('dt', null, 'Question'), h('dd', { 'data-field': 'question' }, text(r.question)),
        h('dt', null, 'Baseline'), h('dd', { 'data-field': 'baseline' }, text(r.baseline)),
        h('dt', null, 'Assumptions'), h('dd', { 'data-field': 'assumptions' }, list(r.assumptions)),
        h('dt', null, 'Unresolved questions'), h('dd', { 'data-field': 'unresolved_questions' }, list(r.unresolved_questions)),
        h('dt', null, 'Evidence'), h('dd', { 'data-field': 'evidence' }, (r.evidence || []).length ? h('ul', null, r.evidence.map((e) => h('li', { 'data-evidence': e }, h('span', { class: 'evidence-name' }), ' ', idButton(e, { what: 'this evidence' })))) : text(null)),
        h('dt', null, 'Residual exposure'), h('dd', { 'data-field': 'residual_exposure' }, text(r.residual_exposure)),
        h('dt', null, 'Expected operating cost'), h('dd', { 'data-field': 'expected_operating_cost' }, cost ? `${cost.amount} ${cost.currency} per ${cost.period}` : text(null)),
        h('dt', null, 'Next authority boundary'), h('dd', { 'data-field': 'next_authority_boundary' }, text(r.next_authority_boundary)),
        h('dt', null, 'Owner'), h('dd', { 'data-field': 'owner' }, text(r.owner)),
        h('dt', null, 'Accepted by'), h('dd', { 'data-field': 'accepted_by' }, text(r.accepted_by)),
        h('dt', null, 'Signed at'), h('dd', { 'data-field': 'created_at' }, r.created_at),
        h('dt', null, 'Record id'), h('dd', { 'data-field': 'id' }, idButton(r.id, { what: 'this decision' })))),
    scorecard(d.id),
    h('section', { class: 'card', 'aria-labelledby': 'chain-title' },
      h('h3', { id: 'chain-title' }, 'Supersede chain'),
      h('dl', { class: 'facts' },
        h('dt', null, 'Supersedes'), h('dd', { 'data-testid': 'supersedes' }, await decisionLink(r.supersedes)),
        h('dt', null, 'Superseded by'), h('dd', { 'data-testid': 'superseded-by' }, await decisionLink(d.superseded_by)))),
    h('section', { class: 'card', 'aria-labelledby': 'signed-title' },
      h('h3', { id: 'signed-title' }, 'Signature and log'),
      h('dl', { class: 'facts' },
        h('dt', null, 'Signer'), h('dd', { 'data-testid': 'signer' }, d.signer),
        h('dt', null, 'Key fingerprint (SHA-256 of the public key)'), h('dd', null, h('code', { class: 'hash', 'data-testid': 'signer-key' }, r.signer_key_id)),
        h('dt', null, 'Signature'), h('dd', null, h('code', { class: 'hash small' }, d.signature)),
        h('dt', null, 'Leaf index'), h('dd', { 'data-testid': 'decision-leaf' }, String(d.leaf_index)),
        h('dt', null, 'Received'), h('dd', null, dateTime(d.received_at))),
      check));

  // The evidence by name (benchmark: workload on offer; upload: what, by whom, when); the ids
  // stay beside them for auditors.
  await Promise.all((r.evidence || []).map(async (e) => {
    const slot = root.querySelector(`li[data-evidence="${CSS.escape(e)}"] .evidence-name`);
    if (!slot) return;
    if (/^[0-9a-f]{64}$/.test(e)) {
      slot.textContent = 'a stored comparison';
      return;
    }
    // What each id is comes from the lists (benchmarks, uploads, workloads), not from asking
    // for it as one kind and then another (a 404 in the console each time); each links to it.
    const known = (await evidenceIndex()).get(e);
    slot.replaceChildren(known ? h('a', { href: known.href }, known.label) : '(not readable by you)');
  }));
  if (ctx.stale()) return;

  if (!LOG_READERS.includes(ctx.user.role)) {
    check.append(notice('The log itself (checkpoint and proofs) is for owners, auditors and admins; they can check this leaf here.'));
    return;
  }
  check.append(h('p', { class: 'loading' }, 'Checking the inclusion proof in this browser…'));
  const res = await checkLeaf(d.leaf_index);
  if (ctx.stale()) return;
  check.dataset.ok = String(res.ok);
  check.replaceChildren(res.ok
    ? notice(h('span', null, 'Verified in this browser: the checkpoint\'s signature, this leaf\'s inclusion proof up to its root, and the approver\'s signature over the record. The authoritative check is ', h('code', null, 'build/capledger verify'), ' on the audit bundle, offline (the Audit page gives the command).'), 'success')
    : alertBox('The in-browser check failed:', res.steps.filter((s) => !s.ok).map((s) => `${s.label}: ${s.detail}`)));
}
