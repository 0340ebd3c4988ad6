// Admin: users (with role and teams; disable, enable, set a password, their signing keys),
// teams, and API tokens for anyone.
import { h, field, alertBox, notice, busy, select } from '../dom.js';
import { request, listAll, ApiError } from '../api.js';
import { dateTime } from '../format.js';
import { problemList, placeFieldErrors } from '../problems.js';
import { table } from '../listing.js';
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
  const detail = h('div', { 'aria-live': 'polite' });

  // One action on one user: its outcome in `out`, then the list again.
  const act = (button, what, fn) => busy(button, async () => {
    out.replaceChildren();
    try {
      out.append(notice(await fn(), 'success'));
      await load();
    } catch (e) {
      out.append(alertBox(`${what}: ${e.message}`, problemList(e instanceof ApiError ? e.errors : [])));
    }
  });
  const disable = (u) => async () => {
    if (!window.confirm(`Disable ${u.username}? Their sessions end, and their API tokens and signing keys are revoked for good.`)) return 'Nothing changed.';
    const { data } = await request('POST', `/users/${encodeURIComponent(u.username)}/disable`);
    return `${u.username} disabled: ${data.sessions_ended} session(s) ended, ${data.tokens_revoked} token(s) and ${data.signing_keys_revoked.length} signing key(s) revoked.`;
  };
  const enable = (u) => async () => {
    await request('POST', `/users/${encodeURIComponent(u.username)}/enable`);
    return `${u.username} may sign in again (revoked tokens and keys stay revoked).`;
  };
  function passwordForm(u) {
    const pw = field(`New password for ${u.username}`, h('input', { type: 'password', required: true, autocomplete: 'new-password', minlength: 12 }), { name: 'password' });
    const save = h('button', { type: 'submit', class: 'primary' }, 'Set password');
    const box = h('form', { class: 'inline-form', 'data-testid': 'password-form' }, pw.wrap, save);
    box.addEventListener('submit', (ev) => {
      ev.preventDefault();
      act(save, 'Password not set', async () => {
        const { data } = await request('POST', `/users/${encodeURIComponent(u.username)}/password`, { json: { password: pw.control.value } });
        pw.control.value = '';
        detail.replaceChildren();
        return `Password of ${u.username} set; ${data.sessions_ended} session(s) ended.`;
      });
    });
    detail.replaceChildren(box);
    pw.control.focus();
  }
  async function keysOf(u) {
    const path = `/users/${encodeURIComponent(u.username)}/signing-keys`;
    try {
      const { data } = await request('GET', path);
      detail.replaceChildren(table([
        { label: 'Key id', value: (k) => h('code', { class: 'hash' }, k.key_id) },
        { label: 'Created', value: (k) => dateTime(k.created_at) },
        { label: 'Revoked', value: (k) => (k.revoked_at ? dateTime(k.revoked_at) : '') },
        { label: '', value: (k) => {
          if (k.revoked_at) return '';
          const b = h('button', { type: 'button' }, 'Revoke');
          b.addEventListener('click', () => act(b, 'Not revoked', async () => {
            await request('DELETE', `${path}/${k.key_id}`);
            await keysOf(u);
            return `Key ${k.key_id.slice(0, 12)}… of ${u.username} revoked (a key event of the log).`;
          }));
          return b;
        } },
      ], data.items, { caption: `Signing keys of ${u.username}`, empty: `${u.username} has no signing key.` }));
    } catch (e) {
      detail.replaceChildren(alertBox(`Signing keys unavailable: ${e.message}`));
    }
  }
  function actions(u) {
    const b = (label, fn) => {
      const x = h('button', { type: 'button', 'aria-label': `${label} ${u.username}` }, label);
      x.addEventListener('click', () => fn(x));
      return x;
    };
    return h('span', { class: 'row-actions' },
      u.disabled_at ? b('Enable', (x) => act(x, 'Not enabled', enable(u))) : b('Disable', (x) => act(x, 'Not disabled', disable(u))),
      ' ', b('Set password', () => passwordForm(u)),
      ' ', b('Signing keys', () => keysOf(u)));
  }

  async function load() {
    try {
      const items = await listAll('/users');
      list.replaceChildren(table([
        { label: 'User', value: (u) => u.username },
        { label: 'Role', value: (u) => h('span', { class: `role role-${u.role}` }, u.role) },
        { label: 'Teams', value: (u) => (u.teams || []).join(', ') },
        { label: 'Created', value: (u) => dateTime(u.created_at) },
        { label: 'Disabled', value: (u) => (u.disabled_at ? dateTime(u.disabled_at) : '') },
        { label: 'Actions', value: actions },
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
  return h('section', { class: 'card', 'aria-labelledby': 'users-title' }, h('h3', { id: 'users-title' }, 'Users'), form, out, list, detail);
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
