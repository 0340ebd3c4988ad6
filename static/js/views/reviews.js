// 90-day reviews: the list, a new review, and one review's phases, artifacts, the 7-item
// checklist (covered, or exactly what is missing), its decisions, and the signed decision form.
import { scorecard, trackRecord } from './scorecard.js';
import { h, field, alertBox, notice, busy, idButton, select } from '../dom.js';
import { request, get, listAll, ApiError } from '../api.js';
import { dateTime, shortId } from '../format.js';
import { problemList, placeFieldErrors } from '../problems.js';
import { table } from '../listing.js';
import { decisionForm } from './decision.js';
import { comparisonPicker, gateVerdict } from './cockpit.js';
import { diffChooser, storyPanel, gateStory, fold, foldBoxes, foldInPlace, evidenceLinks } from './review_story.js';
import { may } from '../roles.js';
import { recordPicker, evidencePicker, comparisonsPicker } from '../pickers.js';

const PHASES = [
  ['evidence_plan', 'Days 1–30: evidence plan', 0],
  ['smallest_complete_workflow', 'Days 31–60: smallest complete workflow', 30],
  ['boundary_test', 'Days 61–90: boundary test', 60],
];
const ARTIFACT_STATUS = [['planned', 'planned'], ['in_progress', 'in progress'], ['done', 'done'], ['blocked', 'blocked']];

function addDays(isoDate, days) {
  const d = new Date(`${isoDate}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function newReviewForm(ctx) {
  const f = {
    title: field('Title', h('input', { type: 'text', required: true, maxlength: 200 }), { name: 'title' }),
    question: field('Question', h('textarea', { rows: 3, required: true, maxlength: 2000 }), { name: 'question', hint: 'The capacity question this review answers.' }),
    owner: field('Owner (username)', h('input', { type: 'text', required: true, value: ctx.user.username }), { name: 'owner' }),
    started_on: field('Started on', h('input', { type: 'date', required: true, value: new Date().toISOString().slice(0, 10) }), { name: 'started_on' }),
    workload_ids: recordPicker({ label: 'Workloads', path: '/workloads', kind: 'workloads', multiple: true, name: 'workload_ids', hint: 'The workloads this review decides for, by name (team).' }),
  };
  const out = h('div', { class: 'form-status' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create review');
  const form = h('form', { class: 'card' }, h('h3', null, 'New 90-day review'), Object.values(f).map((x) => x.wrap), out, submit);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      const body = {
        title: f.title.control.value,
        question: f.question.control.value,
        owner: f.owner.control.value,
        started_on: f.started_on.control.value,
        workload_ids: f.workload_ids.values(),
      };
      try {
        const { data } = await request('POST', '/reviews', { json: body });
        ctx.navigate(`reviews/${data.id}`);
      } catch (e) {
        const rest = e instanceof ApiError ? placeFieldErrors({ ...f, evidence: cited }, e.errors) : [];
        out.append(alertBox(`Not created: ${e.message}`, problemList(rest)));
      }
    });
  });
  return form;
}

export async function renderReviews(root, ctx) {
  root.append(h('h2', null, '90-day reviews'));
  const list = h('div', { 'aria-live': 'polite' }, h('p', { class: 'loading' }, 'Loading…'));
  root.append(list);
  if (may(ctx.user, 'POST /reviews')) root.append(newReviewForm(ctx));
  root.append(trackRecord());
  try {
    const items = await listAll('/reviews', {}, 500);
    if (ctx.stale()) return;
    list.replaceChildren(table([
      { label: 'Review', value: (r) => h('a', { href: `#/reviews/${encodeURIComponent(r.id)}` }, r.title) },
      { label: 'Owner', value: (r) => r.owner },
      { label: 'Started', value: (r) => r.started_on, date: (r) => r.started_on },
      { label: 'Status', value: (r) => statusBadge(r.status) },
    ], items, { caption: 'Reviews', empty: may(ctx.user, 'POST /reviews')
      ? 'No reviews yet: start one with the form "New 90-day review" below.'
      : 'No reviews of your teams\' workloads yet: an owner starts one, and it appears here.' }));
  } catch (e) {
    list.replaceChildren(alertBox(`Could not list reviews: ${e.message}`));
  }
}

function statusBadge(status) {
  return h('span', { class: `status status-${String(status).replace(/\s/g, '-')}` }, status);
}

function checklistView(data, review) {
  const items = data.items || data.checklist || [];
  const covered = items.filter((i) => i.covered).length;
  return h('section', { class: 'checklist', 'aria-labelledby': 'checklist-title' },
    h('h3', { id: 'checklist-title' }, `Checklist: ${covered} of ${items.length} covered`),
    h('ol', null, items.map((i) => h('li', { class: i.status === 'contradicted' ? 'contradicted' : i.covered ? 'covered' : 'missing', 'data-item': i.key || i.id || i.item, 'data-status': i.status || null },
      h('span', { class: 'mark', 'aria-hidden': 'true' }, i.status === 'contradicted' ? '!' : i.covered ? '✓' : '✗'),
      h('span', { class: 'label' }, i.title || i.label || i.item || i.key),
      h('span', { class: i.status === 'contradicted' ? 'status-word' : 'visually-hidden' }, i.status === 'contradicted' ? ' — contradicted by the stored evidence' : i.covered ? ' (covered)' : ' (missing)'),
      evidenceLinks(i.evidence, review),
      !i.covered && [].concat(i.missing || []).length
        ? h('ul', { class: 'missing-list' }, [].concat(i.missing).map((m) => h('li', null, typeof m === 'string' ? m : m.message || JSON.stringify(m))))
        : null))),
    typedVsEvidence(data.typed_vs_evidence || []));
}

// Typed against evidence (docs/reviews.md): every typed assumption the stored evidence also
// gives, side by side, the gap, and whether the evidence value changes the winner.
function typedVsEvidence(list) {
  if (!list.length) return '';
  const num = (x) => (Number.isFinite(x) ? Number(x.toPrecision(4)).toString() : 'n/a');
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Typed against evidence' },
    h('table', { class: 'data', 'data-testid': 'typed-vs-evidence' },
      h('caption', null, 'Typed assumptions against the stored evidence'),
      h('thead', null, h('tr', null, ['Assumption', 'Option', 'Typed', 'Evidence', 'Runs', 'Gap', 'Winner with the evidence'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', null, list.map((c) => h('tr', { class: c.contradicted ? 'contradicted' : null, 'data-assumption': c.assumption },
        h('td', null, c.field), h('td', null, c.option || 'all options'), h('td', null, num(c.typed)), h('td', null, num(c.evidence)),
        h('td', null, String(c.runs)), h('td', null, `${c.gap >= 0 ? '+' : ''}${Math.round(c.gap * 100)}%`),
        h('td', { 'data-testid': 'changes-winner' }, c.changes_winner ? `${c.winner_with_evidence ?? 'no option wins'} — changes the winner: a justification is required` : (c.winner_with_evidence || c.winner || 'n/a')))))));
}

function artifactForm(review, onDone) {
  const f = {
    title: field('Artifact', h('input', { type: 'text', required: true, maxlength: 200 }), { name: 'title' }),
    phase: field('Phase', select(PHASES.map(([k, label]) => [k, label])), { name: 'phase' }),
    contributor: field('Contributor', h('input', { type: 'text', required: true }), { name: 'contributor' }),
    due_on: field('Due', h('input', { type: 'date' }), { name: 'due_on' }),
    representative_inputs: field('Representative inputs', h('textarea', { rows: 2 }), { name: 'representative_inputs' }),
    baseline: field('Agreed baseline', h('textarea', { rows: 2 }), { name: 'baseline' }),
  };
  // The evidence by name: benchmarks, uploads and the review's stored comparisons (ids stay in
  // the API; a comparison shows its SHA-256 for whoever copies it).
  const evidence = evidencePicker({ name: 'artifact-evidence' });
  const comparisons = comparisonsPicker(review, { label: 'Evidence: stored comparisons', name: 'artifact-comparisons' });
  const cited = { wrap: h('div', { class: 'artifact-evidence', 'data-testid': 'artifact-evidence' }, evidence.wrap, comparisons.wrap), control: evidence.control, error: evidence.error };
  const out = h('div', { class: 'form-status' });
  const submit = h('button', { type: 'submit' }, 'Add artifact');
  const form = h('form', { class: 'card', 'aria-labelledby': 'artifact-title' },
    h('h3', { id: 'artifact-title' }, 'Add an artifact'),
    h('div', { class: 'grid-3' }, Object.values(f).map((x) => x.wrap)), cited.wrap, out, submit);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      const body = {};
      for (const [k, x] of Object.entries(f)) if (x.control.value.trim()) body[k] = x.control.value.trim();
      const ids = [...evidence.values(), ...comparisons.values()];
      if (ids.length) body.evidence = ids;
      try {
        await request('POST', `/reviews/${encodeURIComponent(review.id)}/artifacts`, { json: body });
        for (const k of ['title', 'contributor', 'due_on', 'representative_inputs', 'baseline']) f[k].control.value = '';
        evidence.clear();
        comparisons.clear();
        await onDone();
      } catch (e) {
        const rest = e instanceof ApiError ? placeFieldErrors({ ...f, evidence: cited }, e.errors) : [];
        out.append(alertBox(`Not added: ${e.message}`, problemList(rest)));
      }
    });
  });
  return form;
}

// PATCH needs If-Match: the ETag is the artifact's version ("v3"), which the list gives.
async function setArtifactStatus(review, artifact, status, onDone) {
  const url = `/reviews/${encodeURIComponent(review.id)}/artifacts/${encodeURIComponent(artifact.id)}`;
  try {
    await request('PATCH', url, {
      json: { status }, contentType: 'application/merge-patch+json', headers: { 'If-Match': `"v${artifact.version}"` },
    });
    await onDone();
  } catch (e) {
    await onDone(e);
  }
}

// Past its due date and not done (dates are UTC calendar days, as the server's).
function isOverdue(a) {
  return Boolean(a.due_on) && a.status !== 'done' && a.due_on < new Date().toISOString().slice(0, 10);
}

function phasesView(review, artifacts, canEdit, refresh) {
  return h('section', { class: 'phases', 'aria-labelledby': 'phases-title' },
    h('h3', { id: 'phases-title' }, 'Phases and artifacts'),
    PHASES.map(([key, label, offset]) => {
      const mine = artifacts.filter((a) => a.phase === key);
      return h('div', { class: 'phase' },
        h('h4', null, label, review.started_on ? h('span', { class: 'sub' }, ` ${addDays(review.started_on, offset)} → ${addDays(review.started_on, offset + 29)}`) : null),
        table([
          { label: 'Artifact', value: (a) => a.title },
          { label: 'Contributor', value: (a) => a.contributor },
          { label: 'Due', value: (a) => (isOverdue(a) ? h('span', { class: 'overdue', 'data-overdue': 'true' }, a.due_on, ' · overdue') : a.due_on || '') },
          { label: 'Inputs / baseline', value: (a) => [a.representative_inputs, a.baseline].filter(Boolean).join(' · ') },
          { label: 'Status', value: (a) => (canEdit
            ? h('select', {
              'aria-label': `Status of ${a.title}`,
              onchange: (ev) => setArtifactStatus(review, a, ev.target.value, refresh),
            }, ARTIFACT_STATUS.map(([v, l]) => h('option', { value: v, selected: v === a.status }, l)))
            : a.status) },
        ], mine, { empty: canEdit ? 'No artifacts in this phase: add one under "Add an artifact".' : 'No artifacts in this phase.' }));
    }));
}

function decisionsView(decisions) {
  const rec = (d) => d.record || d;
  return h('section', { class: 'decisions', 'aria-labelledby': 'decisions-title' },
    h('h3', { id: 'decisions-title' }, 'Signed decisions'),
    table([
      { label: 'Leaf', class: 'num', value: (d) => String(d.leaf_index) },
      { label: 'Decision', value: (d) => h('span', { class: `decision decision-${rec(d).decision}` }, rec(d).decision) },
      { label: 'Chosen option', value: (d) => rec(d).chosen_option || '—' },
      { label: 'Owner', value: (d) => rec(d).owner },
      { label: 'Accepted by', value: (d) => rec(d).accepted_by },
      { label: 'Signed', value: (d) => dateTime(rec(d).created_at), date: (d) => rec(d).created_at, sort: (d) => rec(d).created_at },
      { label: 'Record', value: (d) => [h('a', { href: `#/decisions/${encodeURIComponent(d.id)}` }, `${rec(d).decision} of ${dateTime(rec(d).created_at)}`), ' ', idButton(d.id, { what: 'the decision' })] },
      { label: 'Status', value: (d) => (d.superseded_by ? 'superseded' : h('strong', null, 'current')) },
    ], decisions, { empty: 'No decision yet.' }));
}

const PHASE_LABEL = Object.fromEntries(PHASES.map(([k, label]) => [k, label]));

// "Day 85 of 90 · Days 61–90: boundary test", or before the start / after the end.
function dayText(review) {
  if (!Number.isInteger(review.day)) return '';
  if (review.day < 1) return `Starts in ${1 - review.day} day${review.day === 0 ? '' : 's'}`;
  if (review.day > 90) return `Day ${review.day}: past the 90 days`;
  return `Day ${review.day} of 90 · ${PHASE_LABEL[review.current_phase] || review.current_phase || ''}`;
}

export async function renderReview(root, ctx) {
  const id = ctx.params[0];
  let { data: review } = await get(`/reviews/${encodeURIComponent(id)}`);
  if (ctx.stale()) return;
  const canEditArtifacts = may(ctx.user, 'POST /reviews/{id}/artifacts');
  const checklistBox = h('div', { 'aria-live': 'polite', 'data-testid': 'checklist-box' });
  const gateBox = h('div', { 'aria-live': 'polite' });
  const artifactsBox = h('div');
  const decisionsBox = h('div', { 'aria-live': 'polite' });
  const scoreBox = h('div');
  const status = h('span', { 'data-testid': 'review-status', 'aria-live': 'polite' }, statusBadge(review.status));
  const day = h('dd', { 'data-testid': 'review-day' }, dayText(review));
  let decisions = [];
  let form = null;
  let chosen = { sha: null, name: '' };
  const diffBox = h('div', { class: 'diff-box' });
  const story = storyPanel(review, ctx);
  const picker = comparisonPicker(review, {
    onChosen: async (sha, stored) => {
      chosen = { sha, name: sha ? picker.el.querySelector('select').selectedOptions[0].textContent.split(' — ')[0] : '' };
      story.setComparison(stored, chosen.name);
      foldInPlace(picker.el.querySelector('.cockpit-comparison section.options'), 'Each option: cost per outcome and where the money goes');
      foldInPlace(picker.el.querySelector('.cockpit-comparison section.charts'), 'In pictures: the cost distribution and the break-even points');
      foldInPlace(picker.el.querySelector('.cockpit-comparison section.break-even'), 'What would change the decision');
      foldInPlace(picker.el.querySelector('.cockpit-comparison section.flag-overhead'), 'Overhead dominates');
      diffBox.replaceChildren(await diffChooser(review, sha));
      if (form && sha) await form.citeComparison(sha);
      await updateChecklist();
    },
  });
  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/reviews' }, 'Reviews'), ' / ', review.title),
    h('h2', null, review.title, ' ', status),
    h('dl', { class: 'facts review-facts' },
      h('dt', null, 'Question'), h('dd', null, review.question),
      h('dt', null, 'Owner'), h('dd', null, review.owner),
      h('dt', null, 'Started'), h('dd', null, review.started_on),
      h('dt', null, 'Today'), day,
      h('dt', null, 'Workloads'), h('dd', { 'data-testid': 'review-workloads' }, 'none named')),
    picker.el, checklistBox, gateBox, artifactsBox, scoreBox, decisionsBox);
  picker.el.after(diffBox);
  picker.el.before(story.el);
  foldBoxes('The checklist and the gate', 'checklist', checklistBox, gateBox);
  foldBoxes('Phases and artifacts', 'phases', artifactsBox);
  foldBoxes('Signed decisions', 'decisions', decisionsBox);
  workloadNames(review).then((names) => {
    const dd = root.querySelector('[data-testid=review-workloads]');
    if (dd && names.length) dd.replaceChildren(...names.map((n) => h('span', { class: 'chip' }, n)));
  });

  // The checklist on the chosen comparison. An owner's page shows the gate's own dry run of an
  // advance (its checklist and verdict are what the append would use); others read the
  // checklist of that comparison.
  let checkSeq = 0;
  async function updateChecklist() {
    const seq = ++checkSeq;
    try {
      if (form && chosen.sha && form.dataset.locked !== 'true') {
        const dry = await form.dryRunAdvance();
        if (seq !== checkSeq || ctx.stale()) return;
        checklistBox.replaceChildren(dry.checklist ? checklistView(dry.checklist, review) : '');
        gateBox.replaceChildren(gateStory(gateVerdict(dry, chosen.name), dry, decisions));
      } else {
        const { data } = await get(`/reviews/${encodeURIComponent(id)}/checklist`, chosen.sha ? { comparison: chosen.sha } : undefined);
        if (seq !== checkSeq || ctx.stale()) return;
        checklistBox.replaceChildren(checklistView(data, review));
        if (!form || form.dataset.locked === 'true') gateBox.replaceChildren();
      }
    } catch (e) {
      if (seq === checkSeq) checklistBox.replaceChildren(alertBox(`Checklist unavailable: ${e.message}`));
    }
  }

  async function readDecisions() {
    const list = await listAll('/decisions', { review: id });
    decisions = list;
    return list;
  }

  // Artifacts, decisions and the review's status are re-read after every change; the decision
  // form (and the receipt of a decision just signed) stays put.
  async function refresh(err) {
    const [fresh, artifacts, list] = await Promise.all([
      get(`/reviews/${encodeURIComponent(id)}`).then((r) => r.data).catch((e) => e),
      get(`/reviews/${encodeURIComponent(id)}/artifacts`).then((r) => r.data.items).catch((e) => e),
      readDecisions().catch((e) => e),
    ]);
    if (ctx.stale()) return;
    if (!(fresh instanceof Error)) {
      review = fresh;
      status.replaceChildren(statusBadge(review.status));
      day.textContent = dayText(review);
    }
    if (list instanceof Error) decisions = [];
    story.setDecisions(decisions, fresh instanceof Error ? null : fresh);
    artifactsBox.replaceChildren(
      err ? alertBox(`Not changed: ${err.message}`) : '',
      artifacts instanceof Error ? alertBox(`Artifacts unavailable: ${artifacts.message}`) : phasesView(review, artifacts, canEditArtifacts, refresh));
    decisionsBox.replaceChildren(list instanceof Error ? alertBox(`Decisions unavailable: ${list.message}`) : decisionsView(decisions));
    // the current decision (the one nothing supersedes), scored against the runs since it
    const current = decisions.find((d) => !d.superseded_by);
    if (current && scoreBox.dataset.decision !== current.id) {
      scoreBox.dataset.decision = current.id;
      scoreBox.replaceChildren(scorecard(current.id));
    }
  }
  await refresh();
  if (ctx.stale()) return;
  if (canEditArtifacts) root.append(fold('Add an artifact', 'artifact-form', artifactForm(review, refresh)));
  if (may(ctx.user, 'POST /decisions')) {
    const slot = h('div');
    let timer = null;
    const mount = async () => {
      form = decisionForm(review, ctx, {
        getPrevious: () => decisions,
        refreshPrevious: readDecisions,
        onSigned: async () => { await refresh(); await updateChecklist(); },
        onAgain: mount,
      });
      // Any edit of the form re-asks the gate (debounced).
      form.addEventListener('change', () => {
        clearTimeout(timer);
        timer = setTimeout(updateChecklist, 250);
      });
      slot.replaceChildren(form);
      if (chosen.sha) {
        await form.citeComparison(chosen.sha);
        await updateChecklist();
      }
    };
    await mount();
    root.append(fold('Record a decision', 'decision-form', slot));
  } else {
    root.append(notice('Only owners record and sign decisions.'));
  }
  // The comparison: the one asked for in the address, else the one the current decision cites,
  // else the newest.
  const current = decisions.find((d) => !d.superseded_by);
  const cited = current && (current.record || current).comparison_sha256;
  await picker.load(ctx.query.get('comparison') || (cited && cited[0]) || null);
}

// The review's workloads by name (team), for people; the ids stay in the API.
async function workloadNames(review) {
  const ids = review.workload_ids || [];
  const rows = await Promise.all(ids.map((w) => get(`/workloads/${encodeURIComponent(w)}`).then((r) => r.data).catch(() => null)));
  return rows.map((w, i) => (w ? `${w.name} (${w.team})` : shortId(ids[i])));
}
