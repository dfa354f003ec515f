// Calls to berth's Zun API with the console's token; errors carry the API's own words.

const TOKEN_KEY = 'berth.token';
const VERSION = 'container 1.40';

export class ApiError extends Error {
  constructor(status, message, detail) {
    super(message);
    this.status = status;
    this.detail = detail;
  }
}

export const session = {
  get token() { return sessionStorage.getItem(TOKEN_KEY); },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
};

/** The message of an error body: Zun's envelope, or the identity stand-in's. */
export function errorMessage(body, fallback) {
  const zun = body && Array.isArray(body.errors) && body.errors[0];
  if (zun) return zun.detail || zun.title || fallback;
  if (body && body.error) return body.error.message || body.error.title || fallback;
  return fallback;
}

export function headers(extra = {}) {
  const out = { 'OpenStack-API-Version': VERSION, Accept: 'application/json', ...extra };
  if (session.token) out['X-Auth-Token'] = session.token;
  return out;
}

function url(path, query) {
  const u = new URL(path, window.location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, String(v));
  }
  return u.pathname + u.search;
}

/** ``call('GET', '/v1/hosts')``: the JSON answer (null for an empty one). */
export async function call(method, path, { query, body } = {}) {
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  const response = await fetch(url(path, query), init);
  const text = await response.text();
  let parsed = null;
  if (text) {
    try { parsed = JSON.parse(text); } catch { parsed = text; }
  }
  if (!response.ok) {
    if (response.status === 401) window.dispatchEvent(new Event('berth-unauthorized'));
    throw new ApiError(response.status, errorMessage(parsed, `${response.status} ${response.statusText}`), parsed);
  }
  return parsed;
}

export { url as apiUrl };
