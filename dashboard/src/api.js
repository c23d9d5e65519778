// The REST client: one key per browser session (sessionStorage), JSON in and out, and
// errors sorted into what the user can act on (a refused key, an unreachable server, the rest).

const KEY = "madeleine.key";

export function getKey() {
  try {
    return sessionStorage.getItem(KEY) || "";
  } catch {
    return "";
  }
}

export function setKey(key) {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY);
}

/** Take a `#key=...` fragment once: keep the key, strip it from the URL. */
export function takeKeyFromFragment() {
  const hash = window.location.hash || "";
  const match = hash.match(/^#key=([^&]*)(?:&(.*))?$/);
  if (!match) return false;
  const key = decodeURIComponent(match[1]);
  if (key) setKey(key);
  const rest = match[2] ? "#" + match[2] : "#/";
  history.replaceState(null, "", window.location.pathname + window.location.search + rest);
  return true;
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let onUnauthorized = () => {};

export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

let onReach = () => {};

/** `handler(false)` when a call gets no answer (network error), `handler(true)` on any answer. */
export function whenReach(handler) {
  onReach = handler;
}

/** Call the API: `api("/v1/stats")`, `api("/v1/search", {method: "POST", body: {...}})`.
 * `quiet: true` keeps a 401 to the caller (the key form checks a key without signing out). */
export async function api(path, { method = "GET", body, query, quiet = false } = {}) {
  let url = path;
  if (query) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
    }
    const text = params.toString();
    if (text) url += (url.includes("?") ? "&" : "?") + text;
  }
  const headers = { Accept: "application/json" };
  const key = getKey();
  if (key) headers.Authorization = "Bearer " + key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    onReach(false);
    throw new ApiError(0, "unreachable", "The request got no answer (network error).");
  }
  onReach(true);
  let data = null;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    let message = error.message || (data && typeof data.detail === "string" ? data.detail : "");
    if (!message) message = `${response.status} ${response.statusText || "error"}`;
    const failure = new ApiError(response.status, error.code || "error", message);
    if (response.status === 401 && !quiet) onUnauthorized(failure);
    throw failure;
  }
  return data;
}
