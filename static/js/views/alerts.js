// Alerts for the owner: assumption drift after a decision and trap warnings. Acknowledging one
// is a PATCH with the alert's ETag.
import { h, alertBox, busy } from '../dom.js';
import { table } from '../listing.js';
import { request, listAll } from '../api.js';
import { dateTime, number } from '../format.js';
import { webhooksSection } from '../webhooks.js';

// A drift metric in words ("gpu_utilization" → "GPU utilisation").
export function metricName(m) {
  return { gpu_utilization: 'GPU utilisation', failure_rate: 'failure rate', queue_wait_s: 'queue wait', throughput_units_per_s: 'throughput' }[m]
    || String(m).replace(/_/g, ' ');
}

export async function renderAlerts(root, ctx) {
  root.append(h('h2', null, 'Alerts'),
    h('p', { class: 'hint' }, 'Raised when job accounting or new benchmarks depart from a signed decision\'s assumptions (failure rate, utilisation, queue delay, throughput); the review is then marked "needs decision".'));
  const box = h('div', { 'aria-live': 'polite' });
  root.append(box);

  async function load() {
    const [items, reviews] = await Promise.all([listAll('/alerts', {}, 500), listAll('/reviews', {}, 500).catch(() => [])]);
    if (ctx.stale()) return;
    const titles = new Map(reviews.map((r) => [r.id, r.title]));
    box.replaceChildren(table([
      { label: 'Raised', value: (a) => dateTime(a.created_at), date: (a) => a.created_at, sort: (a) => a.created_at },
      { label: 'Kind', value: (a) => (a.kind || '').replace(/_/g, ' ') },
      { label: 'What', value: (a) => [a.message, a.note ? `Note: ${a.note}` : null].filter(Boolean).join(' — ') },
      { label: 'Assumed → observed', class: 'num', value: (a) => (a.metric ? `${metricName(a.metric)}: ${number(a.assumed, 3)} → ${number(a.observed, 3)}` : '') },
      { label: 'Review', value: (a) => (a.review_id ? h('a', { href: `#/reviews/${encodeURIComponent(a.review_id)}` }, titles.get(a.review_id) || 'the review') : '') },
      { label: 'Status', value: (a) => a.status },
      { label: '', value: (a) => (a.status === 'resolved' ? '' : h('span', { class: 'row-actions' },
        a.status === 'open' ? h('button', { type: 'button', onclick: (ev) => busy(ev.currentTarget, () => update(a, 'acknowledged')) }, 'Acknowledge') : null,
        h('button', { type: 'button', onclick: (ev) => busy(ev.currentTarget, () => update(a, 'resolved')) }, 'Resolve'))) },
    ], items, { caption: 'Alerts', empty: 'No alerts: the evidence still matches the decisions.' }));
  }

  // PATCH with If-Match: the alert's ETag is its version ("v2").
  async function update(a, status) {
    try {
      await request('PATCH', `/alerts/${encodeURIComponent(a.id)}`, {
        json: { status }, contentType: 'application/merge-patch+json', headers: { 'If-Match': `"v${a.version}"` },
      });
      await load();
    } catch (e) {
      box.prepend(alertBox(`Not changed: ${e.message}`));
    }
  }

  try {
    await load();
  } catch (e) {
    box.replaceChildren(alertBox(`Alerts unavailable: ${e.message}`));
  }
  if (!ctx.stale()) root.append(webhooksSection());
}
