// Admin: users (with role and teams), teams, and API tokens for anyone.
import { h, field, alertBox, notice, busy, table } from '../dom.js';
import { request, listAll, ApiError } from '../api.js';
import { dateTime } from '../format.js';
import { problemList, placeFieldErrors } from '../problems.js';
import { select } from '../listing.js';
import { tokensSection } from '../tokens.js';

function usersSection() {
  const list = h('div', { 'aria-live': 'polite' });
  const f = {
    username: field('Username', h('input', { type: 'text', required: true, autocomplete: 'off' }), { name: 'username' }),
    password: field('Password', h('input', { type: 'password', required: true, autocomplete: 'new-password', minlength: 12 }), { name: 'password' }),
    role: field('Role', select([['team', 'team'], ['owner', 'owner'], ['auditor', 'auditor'], ['admin', 'admin']]), { name: 'role' }),
    teams: field('Teams', h('input', { type: 'text', placeholder: 'vision, nlp' }), { name: 'teams', hint: 'Comma-separated team names.' }),
  };
  const out = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create user');
  const form = h('form', { class: 'inline-form' }, Object.values(f).map((x) => x.wrap), submit);

  async function load() {
    try {
      const items = await listAll('/users');
      list.replaceChildren(table([
        { label: 'User', value: (u) => u.username },
        { label: 'Role', value: (u) => h('span', { class: `role role-${u.role}` }, u.role) },
        { label: 'Teams', value: (u) => (u.teams || []).join(', ') },
        { label: 'Created', value: (u) => dateTime(u.created_at) },
        { label: 'Disabled', value: (u) => (u.disabled_at ? dateTime(u.disabled_at) : '') },
      ], items, { caption: 'Users' }));
    } catch (e) {
      list.replaceChildren(alertBox(`Users unavailable: ${e.message}`));
    }
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      const body = {
        username: f.username.control.value.trim(),
        password: f.password.control.value,
        role: f.role.control.value,
        teams: f.teams.control.value.split(',').map((s) => s.trim()).filter(Boolean),
      };
      try {
        await request('POST', '/users', { json: body });
        f.password.control.value = '';
        out.append(notice(`User ${body.username} created.`, 'success'));
        await load();
      } catch (e) {
        const rest = e instanceof ApiError ? placeFieldErrors(f, e.errors) : [];
        out.append(alertBox(`Not created: ${e.message}`, problemList(rest)));
      }
    });
  });
  load();
  return h('section', { class: 'card', 'aria-labelledby': 'users-title' }, h('h3', { id: 'users-title' }, 'Users'), form, out, list);
}

function teamsSection() {
  const list = h('div', { 'aria-live': 'polite' });
  const name = field('Team name', h('input', { type: 'text', required: true, maxlength: 64 }), { name: 'name' });
  const out = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create team');
  const form = h('form', { class: 'inline-form' }, name.wrap, submit);
  async function load() {
    try {
      const items = await listAll('/teams');
      list.replaceChildren(table([
        { label: 'Team', value: (t) => t.name },
        { label: 'Created', value: (t) => dateTime(t.created_at) },
      ], items, { caption: 'Teams' }));
    } catch (e) {
      list.replaceChildren(alertBox(`Teams unavailable: ${e.message}`));
    }
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, async () => {
      out.replaceChildren();
      try {
        await request('POST', '/teams', { json: { name: name.control.value.trim() } });
        name.control.value = '';
        await load();
      } catch (e) {
        const rest = e instanceof ApiError ? placeFieldErrors({ name }, e.errors) : [];
        out.append(alertBox(`Not created: ${e.message}`, problemList(rest)));
      }
    });
  });
  load();
  return h('section', { class: 'card', 'aria-labelledby': 'teams-title' }, h('h3', { id: 'teams-title' }, 'Teams'), form, out, list);
}

export async function renderAdmin(root) {
  root.append(h('h2', null, 'Administration'), usersSection(), teamsSection(), tokensSection({ forOthers: true }));
}
