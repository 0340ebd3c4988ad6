// fetch() wrapper for /api/v1: same-origin session cookie, the CSRF token (kept in memory only,
// never in storage) on unsafe methods, problem+json errors turned into ApiError.

let csrfToken = null;
let onUnauthenticated = () => {};

export function setCsrfToken(token) {
  csrfToken = token || null;
}

export function onSessionLost(fn) {
  onUnauthenticated = fn;
}

export class ApiError extends Error {
  constructor(status, problem, retryAfter = null) {
    const detail = problem && (problem.detail || problem.title);
    super(detail ? `${detail} (HTTP ${status})` : `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem || {};
    this.errors = Array.isArray(this.problem.errors) ? this.problem.errors : [];
    this.retryAfter = retryAfter; // seconds, from Retry-After (429, 503), else null
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

// Requests in flight, mirrored on <html data-busy> so tests (and scripts driving the page) can
// wait until every answer has been rendered instead of sleeping.
let inflight = 0;
function track(delta) {
  inflight += delta;
  if (typeof document !== 'undefined') document.documentElement.dataset.busy = inflight > 0 ? '1' : '0';
}

export function withQuery(path, query) {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

// fetch() cannot tell how much of a request body has gone out; an upload that wants to show
// its progress goes through XMLHttpRequest, whose upload.onprogress does. Answers like fetch's
// (status, headers.get, json(), text()).
function xhrFetch(url, { method, headers, body }, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open(method, url);
    x.withCredentials = true;
    for (const [k, v] of Object.entries(headers)) x.setRequestHeader(k, v);
    x.upload.onprogress = (ev) => onProgress({ loaded: ev.loaded, total: ev.lengthComputable ? ev.total : null });
    x.onerror = () => reject(new Error('the connection failed'));
    x.onload = () => resolve({
      status: x.status,
      headers: { get: (name) => x.getResponseHeader(name) },
      text: async () => x.responseText,
      json: async () => JSON.parse(x.responseText),
    });
    x.send(body);
  });
}

// request('POST', '/compare', {json: scenario}) or {body: file, contentType: 'text/csv'}.
// Resolves to {status, data (parsed JSON, text, or null), etag, headers}; throws ApiError for
// any status >= 400. onProgress({loaded, total}) is told as the body goes out.
// patience (ms): a 429 or 503 that says when to come back (Retry-After: a computation of the
// caller's still running, the page's own chart request included, or a busy server) is sent
// again then, for up to that long; onWait(error) is told before each wait, and gone() (the
// page was left) ends the waiting. Only for requests that change nothing when refused so (the
// server refuses them before doing anything).
export async function request(method, path, opts = {}) {
  const { patience = 0, onWait, gone = () => false } = opts;
  const deadline = Date.now() + patience;
  for (;;) {
    try {
      return await requestOnce(method, path, opts);
    } catch (e) {
      const wait = e instanceof ApiError && (e.status === 429 || e.status === 503) && e.retryAfter !== null ? e.retryAfter * 1000 : null;
      if (wait === null || Date.now() + wait > deadline || gone()) throw e;
      if (onWait) onWait(e);
      await new Promise((resolve) => { setTimeout(resolve, wait); });
      if (gone()) throw e;
    }
  }
}

async function requestOnce(method, path, { json, body, contentType, query, headers = {}, raw = false, onProgress } = {}) {
  const url = withQuery(path.startsWith('/') && !path.startsWith('/api/') ? `/api/v1${path}` : path, query);
  const h = { Accept: 'application/json, application/problem+json, text/plain', ...headers };
  let payload;
  if (json !== undefined) {
    payload = JSON.stringify(json);
    h['Content-Type'] = contentType || 'application/json';
  } else if (body !== undefined) {
    payload = body;
    if (contentType) h['Content-Type'] = contentType;
  }
  if (!SAFE.has(method) && csrfToken) h['X-CSRF-Token'] = csrfToken;
  let res;
  let data = null;
  track(1);
  try {
    try {
      res = onProgress
        ? await xhrFetch(url, { method, headers: h, body: payload }, onProgress)
        : await fetch(url, { method, headers: h, body: payload, credentials: 'same-origin', cache: 'no-store' });
    } catch (e) {
      throw new ApiError(0, { title: 'The server could not be reached', detail: e.message });
    }
    const type = res.headers.get('Content-Type') || '';
    if (raw) data = await res.text();
    else if (type.includes('json')) data = await res.json().catch(() => null);
    else if (res.status !== 204) data = await res.text();
  } finally {
    // The caller renders the answer in the same task; drop the count after it has run.
    setTimeout(() => track(-1), 0);
  }
  if (res.status === 401 && !path.endsWith('/session')) onUnauthenticated();
  if (res.status >= 400) {
    const after = Number.parseInt(res.headers.get('Retry-After') || '', 10);
    throw new ApiError(res.status, data && typeof data === 'object' ? data : { detail: typeof data === 'string' ? data.slice(0, 300) : '' },
      Number.isFinite(after) && after >= 0 ? Math.min(after, 60) : null);
  }
  return { status: res.status, data, etag: res.headers.get('ETag'), headers: res.headers };
}

export const get = (path, query) => request('GET', path, { query });

// All items of a paginated list up to `max`, following next_cursor.
export async function listAll(path, query = {}, max = 500) {
  const items = [];
  let cursor = null;
  do {
    const { data } = await get(path, { ...query, limit: Math.min(500, max - items.length), cursor });
    items.push(...(data.items || []));
    cursor = data.next_cursor;
  } while (cursor && items.length < max);
  return items;
}
