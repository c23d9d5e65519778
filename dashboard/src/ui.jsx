// Shared pieces: data loading, error / empty / loading states, small formatters.
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";

/** Run `load()` when `deps` change: {data, error, loading, reload}; `reload()` returns a
 * promise of the new data (undefined if it failed or a newer load overtook it). */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    return Promise.resolve()
      .then(load)
      .then(
        (data) => {
          if (mine !== generation.current) return undefined;
          setState({ data, error: null, loading: false });
          return data;
        },
        (error) => {
          if (mine === generation.current) setState({ data: null, error, loading: false });
          return undefined;
        },
      );
  }, deps);
  useEffect(() => {
    run();
  }, [run]);
  return { ...state, reload: run };
}

/** What a Retry button does when the box does not say otherwise: reload the current view. */
export const RetryContext = createContext(null);

export function ErrorBox({ error, what, onRetry, title: given }) {
  const reloadView = useContext(RetryContext);
  if (!error) return null;
  let title = given || (what ? `Could not load ${what}` : "Something went wrong");
  let message = error.message;
  let hint = null;
  let retry = null;
  if (error.status === 0) {
    title = "Cannot reach the server";
    hint = (
      <>
        Check that <code>madeleine serve</code> is running and reachable.
      </>
    );
    retry = onRetry || reloadView;
  } else if (error.status === 401) {
    title = "The server refused the API key";
    if (/refused/i.test(message || "")) message = null; // say it once
  } else if (error.status === 404) {
    title = given || (what ? `Not found: ${what}` : "Not found");
  } else if (error.status === 429) {
    title = "Too many requests: slow down and retry";
    retry = onRetry || reloadView;
  } else if (error.status >= 500) {
    retry = onRetry || reloadView;
  }
  return (
    <div class="error" role="alert" data-testid="error">
      <strong>{title}</strong>
      {message && <div class="error-message">{message}</div>}
      {(hint || retry) && (
        <div class="error-hint">
          {hint && <span class="muted">{hint}</span>}
          {retry && (
            <button type="button" onClick={() => retry()} data-testid="retry">
              Retry
            </button>
          )}
        </div>
      )}
    </div>
  );
}

/** "1 card", "3 cards". */
export function plural(count, one, many = one + "s") {
  return `${count} ${count === 1 ? one : many}`;
}

export function Empty({ children, testid = "empty" }) {
  return (
    <div class="empty" data-testid={testid}>
      {children}
    </div>
  );
}

export function Loading({ what }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> Loading{what ? ` ${what}` : ""}…
    </div>
  );
}

/** The loading / error / data switch most panels need. */
export function Loaded({ state, what, children }) {
  if (state.error) return <ErrorBox error={state.error} what={what} onRetry={state.reload} />;
  if (state.loading && !state.data) return <Loading what={what} />;
  if (!state.data) return null;
  return children(state.data);
}

export function fmtTime(value) {
  if (!value) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

export function fmtDay(value) {
  if (!value) return "—";
  return String(value).slice(0, 10);
}

export function fmtNum(value, digits = 3) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(digits);
}

export function pct(value) {
  if (typeof value !== "number") return "—";
  return Math.round(value * 100) + "%";
}

export function Badge({ children, tone = "", title, testid }) {
  return (
    <span class={`badge ${tone}`} title={title} data-testid={testid}>
      {children}
    </span>
  );
}

export function Meter({ value, max = 1, label, tone = "" }) {
  const share = max > 0 ? Math.max(0, Math.min(1, value / max)) : 0;
  return (
    <span class={`meter ${tone}`} role="img" aria-label={label || `${Math.round(share * 100)}%`}>
      <span class="meter-fill" style={{ width: `${share * 100}%` }} />
    </span>
  );
}

export function RawJson({ value, summary = "Raw JSON" }) {
  return (
    <details class="raw">
      <summary>{summary}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

/** A table that scrolls sideways on narrow screens. */
export function Table({ children, testid, caption }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={caption || "table"}>
      <table data-testid={testid}>
        {caption && <caption class="sr-only">{caption}</caption>}
        {children}
      </table>
    </div>
  );
}

/** A date or datetime-local value, read as UTC whatever the browser's time zone
 * ("2024-03-04T09:15" → "2024-03-04T09:15:00.000Z"), or undefined. */
export function toIso(value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value || "");
  if (!match) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0"] = match;
  const date = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +s));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
