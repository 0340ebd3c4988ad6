// The review's whole story at a glance (issue 23): what the review page adds around the cockpit
// — the comparison diff chooser, the status with its reasons, the deciding assumptions and the
// folding of its sections.
import { h, append, alertBox } from '../dom.js';
import { get, listAll, request } from '../api.js';
import { comparisonLabel } from './cockpit.js';
import { comparisonDiffView } from '../compdiff.js';
import { breakEvenSentence, currencyOf } from '../comparison.js';
import { dateTime as when, number as num, percent as pct } from '../format.js';
import { metricName } from './alerts.js';
import { DESCRIBE } from '../pickers.js';

// "Compare with another stored comparison": the review's other comparisons by scenario and date;
// choosing one shows the two side by side (compdiff.js), the older one as "before".
export async function diffChooser(review, sha) {
  if (!sha) return '';
  const items = await listAll(`/reviews/${encodeURIComponent(review.id)}/comparisons`, {}, 200).catch(() => []);
  const others = items.filter((c) => c.sha256 !== sha);
  if (!others.length) return '';
  const select = h('select', { id: 'diff-with' },
    h('option', { value: '' }, 'choose a comparison'),
    others.map((c) => h('option', { value: c.sha256 }, comparisonLabel(c))));
  const out = h('div', { 'aria-live': 'polite' });
  select.addEventListener('change', async () => {
    if (!select.value) {
      out.replaceChildren();
      return;
    }
    out.replaceChildren(h('p', { class: 'loading' }, 'Reading both comparisons…'));
    try {
      const pick = (x) => items.find((c) => c.sha256 === x);
      const [a, b] = await Promise.all([sha, select.value].map((x) => get(`/comparisons/${encodeURIComponent(x)}`).then((r) => ({ ...pick(x), ...r.data }))));
      const [older, newer] = a.created_at <= b.created_at ? [a, b] : [b, a];
      out.replaceChildren(comparisonDiffView(older, newer));
    } catch (e) {
      out.replaceChildren(alertBox(`Could not compare them: ${e.message}`));
    }
  });
  return h('details', { class: 'fold', 'data-testid': 'diff-chooser' },
    h('summary', null, h('span', { class: 'fold-title' }, 'Compare with another stored comparison')),
    h('div', { class: 'field' }, h('label', { for: select.id }, 'The other comparison'), select), out);
}

// ---- the story at the top: status and its reasons, the deciding assumptions, the gate --------


const rec = (d) => d.record || d;
export function describeDecision(d) {
  const r = rec(d);
  return `${r.decision}${r.chosen_option ? ` ${r.chosen_option}` : ''} · signed ${when(r.created_at)} by ${r.owner || d.signer}`;
}

// The two inputs closest to flipping the winner (relative distance from today's value).
export function decidingAssumptions(result) {
  return (result.break_even || [])
    .filter((e) => Number.isFinite(e.current) && Number.isFinite(e.flips_at) && e.current !== 0)
    .map((e) => ({ ...e, distance: Math.abs(e.flips_at / e.current - 1) }))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, 2);
}

// A drift alert in words: what drifted, by how much, since when, under which decision.
function alertLine(a, decisions, current) {
  const under = decisions.find((d) => d.id === a.decision_id);
  const change = Number.isFinite(a.relative_change) ? ` (${a.relative_change > 0 ? '+' : ''}${pct(a.relative_change, 0)}, threshold ${pct(a.threshold, 0)})` : '';
  const what = a.metric
    ? `${metricName(a.metric)}: the decision assumed ${num(a.assumed, 3)}, observed ${num(a.observed, 3)}${change} over ${num(a.sample_size, 0)} ${a.metric === 'failure_rate' ? 'run' : 'measurement'}${a.sample_size === 1 ? '' : 's'}`
    : a.message;
  const since = `open since ${when(a.created_at)}`;
  const whose = !under ? ''
    : under.id === (current && current.id) ? ', against the current decision'
    : `, raised against an earlier decision (${describeDecision(under)}): still open under the current one`;
  return { text: `${what}, ${since}${whose}.`, stale: Boolean(under && current && under.id !== current.id) };
}

// {el, setDecisions(list, review), setComparison(stored, name), setAlerts(list)}
export function storyPanel(review, ctx) {
  const status = h('p', { class: 'story-status', 'data-testid': 'story-status' });
  const reasons = h('ul', { class: 'story-reasons', 'data-testid': 'story-reasons' });
  const deciding = h('div', { 'data-testid': 'deciding-assumptions' });
  const el = h('section', { class: 'card story', 'aria-labelledby': 'story-title', 'data-testid': 'review-story' },
    h('h3', { id: 'story-title' }, 'At a glance'), status, reasons, deciding);
  const state = { decisions: [], alerts: null, review };
  const isOwner = ctx.user.role === 'owner';

  async function readAlerts() {
    if (!isOwner) return null;
    const all = await listAll('/alerts', {}, 500).catch(() => null);
    return all && all.filter((a) => a.review_id === review.id && a.status !== 'resolved');
  }

  function draw() {
    const current = state.decisions.find((d) => !d.superseded_by);
    const rv = state.review;
    status.replaceChildren();
    append(status, [h('strong', null, `Status: ${rv.status}`), current
      ? [' — current decision: ', h('a', { href: `#/decisions/${encodeURIComponent(current.id)}` }, describeDecision(current)), '.']
      : ' — no decision yet.']);
    reasons.replaceChildren();
    if (state.alerts) {
      for (const a of state.alerts) {
        const line = alertLine(a, state.decisions, current);
        const close = h('button', { type: 'button', class: 'small' }, current && line.stale ? 'Resolve: the current decision answers it' : 'Resolve');
        close.addEventListener('click', async () => {
          close.disabled = true;
          try {
            await request('PATCH', `/alerts/${encodeURIComponent(a.id)}`, {
              json: { status: 'resolved', ...(current ? { note: `answered by the decision ${describeDecision(current)}` } : {}) },
              contentType: 'application/merge-patch+json', headers: { 'If-Match': `"v${a.version}"` },
            });
            state.alerts = await readAlerts();
            const { data } = await get(`/reviews/${encodeURIComponent(review.id)}`);
            state.review = data;
            draw();
          } catch (e) {
            close.disabled = false;
            close.after(alertBox(`Not resolved: ${e.message}`));
          }
        });
        const li = h('li', { class: line.stale ? 'stale-alert' : null, 'data-alert': a.id }, `Drift — ${line.text} `, close);
        // Two reasons at a glance; any more fold under them.
        if (reasons.children.length < 2) {
          reasons.append(li);
        } else {
          let more = reasons.querySelector('details.more-reasons ul');
          if (!more) {
            more = h('ul');
            reasons.append(h('li', { class: 'more' }, h('details', { class: 'more-reasons' }, h('summary', null, 'More alerts'), more)));
          }
          more.append(li);
        }
      }
      const more = reasons.querySelector('details.more-reasons');
      if (more) more.querySelector('summary').textContent = `${more.querySelectorAll('li').length} more open alert${more.querySelectorAll('li').length === 1 ? '' : 's'}`;
    }
    if (rv.status === 'needs decision' && !(state.alerts && state.alerts.length)) {
      reasons.append(h('li', null, isOwner
        ? 'The evidence has drifted from the current decision\'s assumptions.'
        : 'The evidence has drifted from the current decision\'s assumptions: the owner\'s alerts say what and by how much.'));
    }
  }

  return {
    el,
    async setDecisions(list, fresh) {
      state.decisions = list;
      if (fresh) state.review = fresh;
      state.alerts = await readAlerts();
      draw();
      // The decision's scorecard, when the page has one, folds like the other sections.
      foldInPlace(el.parentElement && el.parentElement.querySelector('section.scorecard'), 'Realised against predicted');
    },
    setComparison(stored, name) {
      if (!stored) {
        deciding.replaceChildren();
        return;
      }
      const result = stored.result || stored;
      const two = decidingAssumptions(result);
      const currency = currencyOf(result, stored.scenario);
      deciding.replaceChildren();
      append(deciding, [
        two.length
          ? [h('p', null, h('strong', null, 'The deciding assumptions'), ` of ${name} (the inputs closest to flipping its winner, ${result.winner}):`),
            h('ol', null, two.map((e) => h('li', null, breakEvenSentence(e, stored.scenario, currency), ` That is ${pct(e.distance, 0)} from today's value.`)))]
          : h('p', null, 'No input within the break-even search flips the winner.')]);
    },
  };
}

// The gate's dry run in the review's words: with a current decision, the verdict is about a
// new decision superseding it (never "an advance would be refused" above a signed advance as
// if that advance were still to pass).
export function gateStory(verdictEl, dry, decisions) {
  const current = decisions.find((d) => !d.superseded_by);
  if (!current) return verdictEl;
  const title = verdictEl.querySelector('h3');
  if (title) title.textContent = dry.outcome === 'accepted' ? 'Gate: a new advance superseding the current decision would pass' : 'Gate: a new advance superseding the current decision would be refused';
  for (const p of verdictEl.querySelectorAll('p')) if (/^Current decision:/.test(p.textContent)) p.remove();
  verdictEl.prepend(h('p', { class: 'gate-current' }, 'The current decision, ', h('a', { href: `#/decisions/${encodeURIComponent(current.id)}` }, describeDecision(current)),
    `, passed the gate when it was signed. What follows is about the next one.`));
  return verdictEl;
}

// A section that folds (closed by default): a <details> whose summary is a heading.
export function fold(title, testid, ...content) {
  return h('details', { class: 'fold', 'data-fold': testid },
    h('summary', null, h('span', { class: 'fold-title' }, title)), ...content);
}

// Folds a rendered section in place (the cockpit's option cards and charts).
export function foldInPlace(section, title) {
  if (!section || section.closest('details.fold')) return;
  const d = h('details', { class: 'fold', 'data-fold': title }, h('summary', null, h('span', { class: 'fold-title' }, title)));
  section.replaceWith(d);
  d.append(section);
}

// What each piece of evidence is, from the lists (no guessing by 404): id → {label, href}.
let evidenceIndexPromise = null;
export function evidenceIndex() {
  evidenceIndexPromise ??= Promise.all([
    listAll('/benchmarks', {}, 500).catch(() => []),
    listAll('/uploads', {}, 500).catch(() => []),
    listAll('/workloads', {}, 500).catch(() => []),
  ]).then(([b, u, w]) => new Map([
    ...b.map((x) => [x.id, { label: `benchmark: ${DESCRIBE.benchmarks(x)}`, href: `#/evidence/benchmarks/${encodeURIComponent(x.id)}` }]),
    ...u.map((x) => [x.id, { label: `upload: ${DESCRIBE.uploads(x)}`, href: `#/evidence/uploads/${encodeURIComponent(x.id)}` }]),
    ...w.map((x) => [x.id, { label: `workload: ${x.name} (${x.team})`, href: '#/evidence/workloads' }]),
  ]));
  setTimeout(() => { evidenceIndexPromise = null; }, 30_000);
  return evidenceIndexPromise;
}

// The links of a checklist item's evidence ids (comparisons open in the cockpit).
export function evidenceLinks(ids, review) {
  const box = h('p', { class: 'evidence-links' });
  if (!ids || !ids.length) return box;
  evidenceIndex().then((index) => {
    box.append('Evidence: ', ...ids.flatMap((id, i) => {
      const known = /^[0-9a-f]{64}$/.test(id)
        ? { label: 'a stored comparison', href: `#/reviews/${encodeURIComponent(review.id)}?comparison=${id}` }
        : index.get(id);
      return [i ? '; ' : '', known ? h('a', { href: known.href }, known.label) : 'a record you cannot read'];
    }));
  });
  return box;
}

// Folds boxes already in the page: the first box's place becomes the fold, all move inside.
export function foldBoxes(title, testid, ...boxes) {
  const d = fold(title, testid);
  boxes[0].replaceWith(d);
  d.append(...boxes);
  return d;
}
