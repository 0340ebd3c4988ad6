// capledger's web UI: a hash-routed single page, plain ES modules, no build step. The CSP
// (script-src 'self', style-src 'self') rules out inline scripts and style attributes, so every
// element is built with DOM APIs (js/dom.js) and every dynamic width is set through CSSOM.
import { h, append, clear, alertBox } from './js/dom.js';
import { request, setCsrfToken, onSessionLost, ApiError } from './js/api.js';
import { renderLogin } from './js/views/login.js';
import { renderCompare } from './js/views/compare.js';
import { renderWhatif } from './js/views/whatif.js';
import { renderEvidence } from './js/views/evidence.js';
import { renderReviews, renderReview } from './js/views/reviews.js';
import { renderAudit } from './js/views/audit.js';
import { renderAlerts } from './js/views/alerts.js';
import { renderAdmin } from './js/views/admin.js';
import { renderAccount } from './js/views/account.js';
import { renderDecision } from './js/views/decision_page.js';
import { LANDING } from './js/roles.js';

// Which pages each role sees (the server enforces access; this only keeps the menu honest).
const PAGES = [
  { path: 'compare', label: 'Compare', roles: ['owner', 'team', 'auditor', 'admin'], render: renderCompare },
  { path: 'whatif', label: 'What-if', roles: ['owner', 'team'], render: renderWhatif },
  { path: 'evidence', label: 'Evidence', roles: ['owner', 'team', 'auditor'], render: renderEvidence },
  { path: 'reviews', label: 'Reviews', roles: ['owner', 'team', 'auditor'], render: renderReviews },
  { path: 'alerts', label: 'Alerts', roles: ['owner'], render: renderAlerts },
  { path: 'audit', label: 'Audit', roles: ['owner', 'auditor', 'admin'], render: renderAudit },
  { path: 'admin', label: 'Admin', roles: ['admin'], render: renderAdmin },
  { path: 'account', label: 'Account', roles: ['owner', 'team', 'auditor', 'admin'], render: renderAccount },
  // Reached by links (reviews, audit), not from the menu.
  { path: 'decisions', label: 'Decision', roles: ['owner', 'team', 'auditor', 'admin'], render: renderDecision, menu: false },
];

const state = { user: null, renderSeq: 0 };
const app = document.getElementById('app');
const nav = document.getElementById('nav');
const who = document.getElementById('who');

function pagesFor(user) {
  return user ? PAGES.filter((p) => p.roles.includes(user.role)) : [];
}

// The role's landing page (LANDING), else its first page.
function landing(user) {
  const pages = pagesFor(user);
  const page = pages.find((p) => p.path === LANDING[user.role]) || pages[0];
  return page ? page.path : 'account';
}

function parseHash() {
  const hash = location.hash.startsWith('#/') ? location.hash.slice(2) : '';
  const [pathPart, queryPart = ''] = hash.split('?');
  const parts = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  return { parts, query: new URLSearchParams(queryPart) };
}

export function navigate(path) {
  const target = `#/${path}`;
  if (location.hash === target) route();
  else location.hash = target;
}

function renderShell() {
  clear(nav);
  clear(who);
  if (!state.user) return;
  const { parts } = parseHash();
  nav.append(h('ul', null, pagesFor(state.user).filter((p) => p.menu !== false).map((p) =>
    h('li', null, h('a', { href: `#/${p.path}`, 'aria-current': parts[0] === p.path ? 'page' : null }, p.label)))));
  const teams = state.user.teams && state.user.teams.length ? ` · ${state.user.teams.join(', ')}` : '';
  append(who, [
    h('span', { class: 'user', 'data-testid': 'current-user' }, state.user.username),
    h('span', { class: `role role-${state.user.role}`, 'data-testid': 'current-role' }, state.user.role),
    teams ? h('span', { class: 'teams' }, teams) : null,
    h('button', { type: 'button', class: 'link', onclick: logout }, 'Sign out')]);
}

async function logout() {
  try {
    await request('DELETE', '/session');
  } catch (e) {
    // Already gone (401) is the outcome we wanted; anything else is still shown after the reset.
    if (!(e instanceof ApiError && e.status === 401)) console.warn('sign-out:', e.message);
  }
  signedOut('You are signed out.');
}

function signedOut(message) {
  state.user = null;
  setCsrfToken(null);
  renderShell();
  if (location.hash !== '#/login') history.replaceState(null, '', '#/login');
  route(message);
}

function signedIn(user, csrf) {
  state.user = user;
  setCsrfToken(csrf);
  renderShell();
  const { parts } = parseHash();
  const wanted = parts[0] && pagesFor(user).some((p) => p.path === parts[0]);
  navigate(wanted ? parts.join('/') : landing(user));
}

async function route(message) {
  const seq = ++state.renderSeq;
  const { parts, query } = parseHash();
  if (!state.user) {
    clear(app);
    renderLogin(app, { onSignedIn: signedIn, message });
    return;
  }
  renderShell();
  const pages = pagesFor(state.user);
  const page = pages.find((p) => p.path === parts[0] && (p.menu !== false || parts[1]));
  if (!page) {
    navigate(landing(state.user));
    return;
  }
  clear(app);
  delete app.dataset.route;
  const ctx = {
    user: state.user,
    params: parts.slice(1),
    query,
    navigate,
    stale: () => seq !== state.renderSeq,
  };
  document.title = `${page.label} · capledger`;
  try {
    if (page.path === 'reviews' && parts[1]) await renderReview(app, ctx);
    else await page.render(app, ctx);
  } catch (e) {
    if (seq === state.renderSeq) app.append(alertBox(`Could not show this page: ${e.message}`));
  }
  if (seq === state.renderSeq) {
    app.dataset.route = parts.join('/');
    if (!app.contains(document.activeElement)) app.focus({ preventScroll: true });
  }
}

onSessionLost(() => {
  if (state.user) signedOut('Your session has ended: sign in again.');
});

window.addEventListener('hashchange', () => {
  if (location.hash === '' || location.hash.startsWith('#/')) route();
});

// A reload keeps the session cookie but not the CSRF token (memory only): GET /me tells who we
// are and, when the server offers one, a fresh token; without one, unsafe requests would fail,
// so the user signs in again.
(async function start() {
  try {
    const { data } = await request('GET', '/me');
    const user = data.user || data;
    if (data.csrf_token) {
      state.user = user;
      setCsrfToken(data.csrf_token);
      route();
      return;
    }
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) {
      clear(app);
      app.append(alertBox(`The server did not answer: ${e.message}`));
    }
  }
  route();
})();
