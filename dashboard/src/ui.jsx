// Shared pieces: data loading, error / empty / loading states, small formatters.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/** Run `load()` when `deps` change: {data, error, loading, reload}. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    Promise.resolve()
      .then(load)
      .then(
        (data) => mine === generation.current && setState({ data, error: null, loading: false }),
        (error) => mine === generation.current && setState({ data: null, error, loading: false }),
      );
  }, deps);
  useEffect(run, [run]);
  return { ...state, reload: run };
}

export function ErrorBox({ error, what }) {
  if (!error) return null;
  let title = what ? `Could not load ${what}` : "Something went wrong";
  let hint = null;
  if (error.status === 0) {
    title = "Cannot reach the server";
    hint = "Check that `madeleine serve` is running and reachable, then retry.";
  } else if (error.status === 401) {
    title = "The server refused the API key";
  } else if (error.status === 404) {
    title = what ? `Not found: ${what}` : "Not found";
  } else if (error.status === 429) {
    title = "Too many requests: slow down and retry";
  }
  return (
    <div class="error" role="alert" data-testid="error">
      <strong>{title}</strong>
      <div class="error-message">{error.message}</div>
      {hint && <div class="muted">{hint}</div>}
    </div>
  );
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
  if (state.error) return <ErrorBox error={state.error} what={what} />;
  if (state.loading && !state.data) return <Loading what={what} />;
  if (!state.data) return null;
  return children(state.data);
}

export function fmtTime(value) {
  if (!value) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toISOString().slice(0, 16).replace("T", " ");
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

/** A datetime-local value (local time) → ISO string in UTC, or undefined. */
export function toIso(local) {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
