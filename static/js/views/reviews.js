// 90-day reviews: the list, a new review, and one review's phases, artifacts, the 7-item
// checklist (covered, or exactly what is missing), its decisions, and the signed decision form.
import { h, field, alertBox, notice, busy, table } from '../dom.js';
import { request, get, listAll, ApiError } from '../api.js';
import { dateTime, shortId, splitLines } from '../format.js';
import { problemList, placeFieldErrors } from '../problems.js';
import { select } from '../listing.js';
import { decisionForm } from './decision.js';

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
    workload_ids: field('Workload ids', h('textarea', { rows: 2, class: 'code' }), { name: 'workload_ids', hint: 'One per line.' }),
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
        workload_ids: splitLines(f.workload_ids.control.value),
      };
      try {
        const { data } = await request('POST', '/reviews', { json: body });
        ctx.navigate(`reviews/${data.id}`);
      } catch (e) {
        const rest = e instanceof ApiError ? placeFieldErrors(f, e.errors) : [];
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
  if (ctx.user.role === 'owner') root.append(newReviewForm(ctx));
  try {
    const items = await listAll('/reviews', {}, 500);
    if (ctx.stale()) return;
    list.replaceChildren(table([
      { label: 'Review', value: (r) => h('a', { href: `#/reviews/${encodeURIComponent(r.id)}` }, r.title) },
      { label: 'Owner', value: (r) => r.owner },
      { label: 'Started', value: (r) => r.started_on },
      { label: 'Status', value: (r) => statusBadge(r.status) },
    ], items, { caption: 'Reviews', empty: 'No reviews yet.' }));
  } catch (e) {
    list.replaceChildren(alertBox(`Could not list reviews: ${e.message}`));
  }
}

function statusBadge(status) {
  return h('span', { class: `status status-${String(status).replace(/\s/g, '-')}` }, status);
}

function checklistView(data) {
  const items = data.items || data.checklist || [];
  const covered = items.filter((i) => i.covered).length;
  return h('section', { class: 'checklist', 'aria-labelledby': 'checklist-title' },
    h('h3', { id: 'checklist-title' }, `Checklist: ${covered} of ${items.length} covered`),
    h('ol', null, items.map((i) => h('li', { class: i.covered ? 'covered' : 'missing', 'data-item': i.key || i.id || i.item },
      h('span', { class: 'mark', 'aria-hidden': 'true' }, i.covered ? '✓' : '✗'),
      h('span', { class: 'label' }, i.title || i.label || i.item || i.key),
      h('span', { class: 'visually-hidden' }, i.covered ? ' (covered)' : ' (missing)'),
      !i.covered && [].concat(i.missing || []).length
        ? h('ul', { class: 'missing-list' }, [].concat(i.missing).map((m) => h('li', null, typeof m === 'string' ? m : m.message || JSON.stringify(m))))
        : null))));
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
  const out = h('div', { class: 'form-status' });
  const submit = h('button', { type: 'submit' }, 'Add artifact');
  const form = h('form', { class: 'card', 'aria-labelledby': 'artifact-title' },
    h('h3', { id: 'artifact-title' }, 'Add an artifact'),
    h('div', { class: 'grid-3' }, Object.values(f).map((x) => x.wrap)), out, submit);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      const body = {};
      for (const [k, x] of Object.entries(f)) if (x.control.value.trim()) body[k] = x.control.value.trim();
      try {
        await request('POST', `/reviews/${encodeURIComponent(review.id)}/artifacts`, { json: body });
        for (const k of ['title', 'contributor', 'due_on', 'representative_inputs', 'baseline']) f[k].control.value = '';
        await onDone();
      } catch (e) {
        const rest = e instanceof ApiError ? placeFieldErrors(f, e.errors) : [];
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
          { label: 'Due', value: (a) => a.due_on || '' },
          { label: 'Inputs / baseline', value: (a) => [a.representative_inputs, a.baseline].filter(Boolean).join(' · ') },
          { label: 'Status', value: (a) => (canEdit
            ? h('select', {
              'aria-label': `Status of ${a.title}`,
              onchange: (ev) => setArtifactStatus(review, a, ev.target.value, refresh),
            }, ARTIFACT_STATUS.map(([v, l]) => h('option', { value: v, selected: v === a.status }, l)))
            : a.status) },
        ], mine, { empty: 'No artifacts in this phase.' }));
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
      { label: 'Signed', value: (d) => dateTime(rec(d).created_at) },
      { label: 'Id', value: (d) => h('code', { title: d.id }, shortId(d.id)) },
    ], decisions, { empty: 'No decision yet.' }));
}

export async function renderReview(root, ctx) {
  const id = ctx.params[0];
  const { data: review } = await get(`/reviews/${encodeURIComponent(id)}`);
  if (ctx.stale()) return;
  const isOwner = ctx.user.role === 'owner';
  // Owners and team members (the contributors) keep artifacts up to date; only owners sign.
  const canEditArtifacts = isOwner || ctx.user.role === 'team';
  const checklistBox = h('div', { 'aria-live': 'polite' });
  const artifactsBox = h('div');
  const decisionsBox = h('div', { 'aria-live': 'polite' });
  let decisions = [];
  root.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/reviews' }, 'Reviews'), ' / ', review.title),
    h('h2', null, review.title, ' ', statusBadge(review.status)),
    h('dl', { class: 'facts' },
      h('dt', null, 'Question'), h('dd', null, review.question),
      h('dt', null, 'Owner'), h('dd', null, review.owner),
      h('dt', null, 'Started'), h('dd', null, review.started_on),
      h('dt', null, 'Workloads'), h('dd', null, (review.workload_ids || []).length ? review.workload_ids.map((w) => h('code', { class: 'chip' }, w)) : 'none named')),
    checklistBox, artifactsBox, decisionsBox);

  // Checklist, artifacts and decisions are re-read after every change; the decision form (and
  // the receipt of a decision just signed) stays put.
  async function refresh(err) {
    const [artifacts, checklist, list] = await Promise.all([
      get(`/reviews/${encodeURIComponent(id)}/artifacts`).then((r) => r.data.items).catch((e) => e),
      get(`/reviews/${encodeURIComponent(id)}/checklist`).then((r) => r.data).catch((e) => e),
      listAll('/decisions', { review: id }).catch((e) => e),
    ]);
    if (ctx.stale()) return;
    decisions = list instanceof Error ? [] : list;
    checklistBox.replaceChildren(checklist instanceof Error ? alertBox(`Checklist unavailable: ${checklist.message}`) : checklistView(checklist));
    artifactsBox.replaceChildren(
      err ? alertBox(`Not changed: ${err.message}`) : '',
      artifacts instanceof Error ? alertBox(`Artifacts unavailable: ${artifacts.message}`) : phasesView(review, artifacts, canEditArtifacts, refresh));
    decisionsBox.replaceChildren(list instanceof Error ? alertBox(`Decisions unavailable: ${list.message}`) : decisionsView(decisions));
  }
  await refresh();
  if (ctx.stale()) return;
  if (canEditArtifacts) root.append(artifactForm(review, refresh));
  if (isOwner) root.append(decisionForm(review, ctx, { getPrevious: () => decisions, onSigned: () => refresh() }));
  else root.append(notice('Only owners record and sign decisions.'));
}
