// Webhooks (owners, on the Alerts page): where alerts are posted, each one's delivery state
// (delivered / failing, attempts, the last error), a test message, and the signing secret shown
// once when a webhook is created.
import { h, field, alertBox, busy } from './dom.js';
import { table } from './listing.js';
import { request, listAll } from './api.js';
import { dateTime } from './format.js';
import { problemList } from './problems.js';

const EVENTS = [
  ['drift', 'Drift (evidence departs from a decision)'],
  ['log_integrity', 'Log integrity (the decision log is inconsistent)'],
];

function stateBadge(status) {
  const kind = status === 'delivered' ? 'win' : status === 'failing' || status === 'failed' ? 'bad' : '';
  return h('span', { class: ['badge', kind], 'data-status': status }, status);
}

function deliverySummary(w) {
  const d = w.deliveries || {};
  const parts = [`${d.delivered || 0} delivered`];
  if (d.failing) parts.push(`${d.failing} failing`);
  if (d.pending) parts.push(`${d.pending} pending`);
  if (d.failed) parts.push(`${d.failed} given up`);
  return parts.join(', ');
}

function lastDelivery(w) {
  const l = w.last_delivery;
  if (!l) return 'never';
  return h('span', null, stateBadge(l.status), ' ',
    l.last_error ? h('span', { class: 'hint' }, `${l.last_error} (attempt ${l.attempts})`)
      : l.delivered_at ? dateTime(l.delivered_at) : '');
}

export function webhooksSection() {
  const list = h('div', { 'aria-live': 'polite' });
  const out = h('div', { 'aria-live': 'polite' });
  const details = h('div', { 'aria-live': 'polite' });
  const url = field('URL', h('input', { type: 'url', required: true, maxlength: 2048, placeholder: 'https://hooks.slack.com/services/…' }),
    { name: 'url', hint: 'http or https only: the server will post to it from inside your network.' });
  const format = field('Format', h('select', null,
    h('option', { value: 'json' }, 'JSON, signed (for tools)'),
    h('option', { value: 'slack' }, 'Slack-compatible text (chat channels)')), { name: 'format' });
  const description = field('Description', h('input', { type: 'text', maxlength: 200, placeholder: '#gpu-capacity' }), { name: 'description' });
  const boxes = EVENTS.map(([value, label]) => {
    const input = h('input', { type: 'checkbox', value, checked: value === 'drift', id: `webhook-event-${value}` });
    return { input, wrap: h('label', { class: 'check', for: input.id }, input, ' ', label) };
  });
  const events = h('fieldset', { class: 'field', 'data-field': 'events' }, h('legend', null, 'Events'), boxes.map((b) => b.wrap));
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Add webhook');
  const form = h('form', { class: 'inline-form', 'aria-label': 'Add a webhook' }, url.wrap, format.wrap, description.wrap, events, submit);

  async function showDeliveries(w) {
    try {
      const { data } = await request('GET', `/webhooks/${encodeURIComponent(w.id)}/deliveries`, { query: { limit: 20 } });
      details.replaceChildren(h('h4', null, `Latest deliveries to ${w.description || w.url}`), table([
        { label: 'Queued', value: (d) => dateTime(d.created_at) },
        { label: 'Event', value: (d) => d.event.replace(/_/g, ' ') },
        { label: 'State', value: (d) => stateBadge(d.status) },
        { label: 'Attempts', class: 'num', value: (d) => String(d.attempts) },
        { label: 'Last reply', value: (d) => (d.last_status ? `HTTP ${d.last_status}` : '—') },
        { label: 'Last error', value: (d) => d.last_error || '' },
        { label: 'Next attempt', value: (d) => (d.next_attempt_at ? dateTime(d.next_attempt_at) : '') },
        { label: 'Delivery id', value: (d) => h('code', null, d.id) },
      ], data.items, { caption: 'Deliveries (newest first)', empty: 'Nothing delivered yet.' }));
    } catch (e) {
      details.replaceChildren(alertBox(`Deliveries unavailable: ${e.message}`));
    }
  }

  async function act(fn, what) {
    try {
      await fn();
      await load();
    } catch (e) {
      out.replaceChildren(alertBox(`${what}: ${e.message}`));
    }
  }

  async function load() {
    try {
      const items = await listAll('/webhooks');
      list.replaceChildren(table([
        { label: 'Where', value: (w) => h('span', null, w.description ? h('strong', null, w.description) : null, w.description ? h('br') : null, h('code', { class: 'hash' }, w.url)) },
        { label: 'Events', value: (w) => w.events.map((e) => e.replace(/_/g, ' ')).join(', ') },
        { label: 'Format', value: (w) => w.format },
        { label: 'Deliveries', value: deliverySummary },
        { label: 'Last delivery', value: lastDelivery },
        { label: '', value: (w) => h('span', { class: 'row-actions' },
          h('button', { type: 'button', 'aria-label': `Send a test message to ${w.description || w.url}`,
            onclick: (ev) => busy(ev.currentTarget, () => act(() => request('POST', `/webhooks/${encodeURIComponent(w.id)}/ping`), 'Test not queued')) }, 'Send test'),
          h('button', { type: 'button', 'aria-label': `Show deliveries to ${w.description || w.url}`,
            onclick: (ev) => busy(ev.currentTarget, () => showDeliveries(w)) }, 'Deliveries'),
          h('button', { type: 'button', class: 'danger', 'aria-label': `Delete webhook ${w.description || w.url}`,
            onclick: (ev) => busy(ev.currentTarget, () => act(() => request('DELETE', `/webhooks/${encodeURIComponent(w.id)}`), 'Not deleted')) }, 'Delete')) },
      ], items, { caption: 'Webhooks', empty: 'No webhooks: alerts are only shown here.' }));
    } catch (e) {
      list.replaceChildren(alertBox(`Webhooks unavailable: ${e.message}`));
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      const body = { url: url.control.value.trim(), events: boxes.filter((b) => b.input.checked).map((b) => b.input.value), format: format.control.value };
      if (description.control.value.trim()) body.description = description.control.value.trim();
      try {
        const { data } = await request('POST', '/webhooks', { json: body });
        const value = h('input', { type: 'text', readonly: true, value: data.secret, class: 'code token-value', 'aria-label': 'Signing secret', 'data-testid': 'webhook-secret' });
        const copy = h('button', { type: 'button', onclick: async () => {
          value.select();
          try {
            await navigator.clipboard.writeText(data.secret);
            copy.textContent = 'Copied';
          } catch {
            copy.textContent = 'Select and copy by hand';
          }
        } }, 'Copy');
        out.append(h('div', { class: 'alert success', role: 'status' },
          h('p', null, h('strong', null, 'Copy the signing secret now: it is shown only this once.'),
            ' Receivers check the webhook-signature header with it (docs/webhooks.md).'), value, copy));
        url.control.value = '';
        description.control.value = '';
        await load();
      } catch (e) {
        out.append(alertBox(`No webhook added: ${e.message}`, problemList(e.errors)));
      }
    });
  });

  load();
  return h('section', { class: 'card', 'aria-labelledby': 'webhooks-title', 'data-testid': 'webhooks' },
    h('h3', { id: 'webhooks-title' }, 'Webhooks'),
    h('p', { class: 'hint' }, 'Alerts addressed to you are also posted here — a chat channel or an incident tool — signed, retried until delivered.'),
    form, out, list, details);
}
