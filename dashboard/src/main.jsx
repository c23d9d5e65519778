// The dashboard shell: key intake, header with the user selector, tabs, hash routes.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./app.css";
import { api, forgetKey, getKey, setKey, takeKeyFromFragment, whenUnauthorized } from "./api.js";
import { href, navigate, useRoute } from "./router.js";
import { ErrorBox, useLoad } from "./ui.jsx";
import { UsersView } from "./views/users.jsx";
import { ProfileView } from "./views/profile.jsx";
import { SearchView } from "./views/search.jsx";
import { GraphView } from "./views/graph.jsx";
import { TimelineView } from "./views/timeline.jsx";
import { KnowledgeView } from "./views/kb.jsx";
import { HealthView } from "./views/health.jsx";

const TABS = [
  ["profile", "Profile"],
  ["search", "Search explain"],
  ["graph", "Graph"],
  ["timeline", "Timeline"],
  ["kb", "Knowledge base"],
  ["health", "Alerts & health"],
];

function KeyForm({ reason, onKey, onRetry }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    const key = value.trim();
    if (!key) {
      setError({ status: -1, message: "Enter an API key." });
      return;
    }
    setBusy(true);
    setError(null);
    onRetry();
    setKey(key);
    try {
      await api("/v1/stats");
      onKey(key);
    } catch (failure) {
      if (failure.status === 401) {
        forgetKey();
        setError({ status: 401, message: "The server refused this key: check it and try again." });
      } else if (failure.status === 0) {
        setError(failure);
      } else {
        onKey(key); // the key works; another problem will show where it happens
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="key-page">
      <form class="key-form card" onSubmit={submit} data-testid="key-form">
        <h1>
          <span class="logo" aria-hidden="true">
            ◐
          </span>{" "}
          Madeleine
        </h1>
        <p class="muted">Memory dashboard. Enter an API key of this server to continue.</p>
        {reason && (
          <div class="error" role="alert" data-testid="key-reason">
            {reason}
          </div>
        )}
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          data-testid="key-input"
          autofocus
        />
        <p class="hint muted">Kept for this browser tab only (sessionStorage); "Sign out" forgets it.</p>
        {error && error.status === -1 && (
          <div class="error" role="alert">
            {error.message}
          </div>
        )}
        {error && error.status !== -1 && (
          <div data-testid="key-error">
            <ErrorBox error={error} />
          </div>
        )}
        <button type="submit" class="primary" disabled={busy} data-testid="key-submit">
          {busy ? "Checking…" : "Open dashboard"}
        </button>
      </form>
    </main>
  );
}

function UserPicker({ users, loading, current }) {
  const [typed, setTyped] = useState("");
  const tab = useRoute().parts[2] || "profile";
  if (loading && !users)
    return (
      <label class="user-picker">
        <span>User</span>
        <select disabled aria-busy="true">
          <option>{current || "loading…"}</option>
        </select>
      </label>
    );
  if (users && users.length) {
    const known = users.some((u) => u.user_id === current);
    return (
      <label class="user-picker">
        <span>User</span>
        <select
          data-testid="user-select"
          value={current || ""}
          onChange={(e) => e.currentTarget.value && navigate(["users", e.currentTarget.value, tab])}
        >
          <option value="">— pick a user —</option>
          {!known && current && <option value={current}>{current}</option>}
          {users.map((u) => (
            <option value={u.user_id}>{u.user_id}</option>
          ))}
        </select>
      </label>
    );
  }
  return (
    <form
      class="user-picker"
      onSubmit={(e) => {
        e.preventDefault();
        if (typed.trim()) navigate(["users", typed.trim(), tab]);
      }}
    >
      <label for="user-typed">User</label>
      <input
        id="user-typed"
        data-testid="user-input"
        placeholder={current || "user id"}
        value={typed}
        onInput={(e) => setTyped(e.currentTarget.value)}
      />
      <button type="submit">Open</button>
    </form>
  );
}

function Shell({ onSignOut }) {
  const route = useRoute();
  const [section, user, tab = "profile"] = route.parts;
  const users = useLoad(
    () =>
      api("/v1/users").then(
        (r) => r.users || [],
        (e) => {
          if (e.status === 404 || e.status === 405) return null; // an older server
          throw e;
        },
      ),
    [],
  );
  const health = useLoad(() => api("/health"), []);
  useEffect(() => {
    const timer = setInterval(health.reload, 30_000); // say so when the server goes away
    return () => clearInterval(timer);
  }, [health.reload]);
  const inUser = section === "users" && user;
  // A first visit lands on the only user, or the users list.
  useEffect(() => {
    if (!section && users.data && users.data.length === 1) {
      navigate(["users", users.data[0].user_id, "profile"]);
    }
  }, [section, users.data]);

  let body;
  if (!inUser) {
    body = <UsersView users={users} />;
  } else {
    const props = { user, params: route.params, rest: route.parts.slice(3) };
    body =
      {
        profile: <ProfileView {...props} />,
        search: <SearchView {...props} />,
        graph: <GraphView {...props} />,
        timeline: <TimelineView {...props} />,
        kb: <KnowledgeView {...props} />,
        health: <HealthView {...props} />,
      }[tab] || <ErrorBox error={{ status: 404, message: `no page "${tab}"` }} what="this page" />;
  }
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => {
        e.preventDefault();
        document.getElementById("main")?.focus();
      }}>
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={href([])} data-testid="brand">
          <span class="logo" aria-hidden="true">
            ◐
          </span>{" "}
          Madeleine
        </a>
        <UserPicker users={users.data} loading={users.loading} current={inUser ? user : ""} />
        <span class="spacer" />
        <span
          class={`server-status ${health.error ? "down" : health.data ? "up" : ""}`}
          data-testid="server-status"
          title={health.error ? health.error.message : "server reachable"}
        >
          {health.error ? "server unreachable" : health.data ? `v${health.data.version}` : "…"}
        </span>
        <button type="button" class="ghost" onClick={onSignOut} data-testid="sign-out">
          Sign out
        </button>
      </header>
      {inUser && (
        <nav class="tabs" aria-label="Views">
          {TABS.map(([name, label]) => (
            <a
              href={href(["users", user, name])}
              class={name === tab ? "tab active" : "tab"}
              aria-current={name === tab ? "page" : undefined}
              data-testid={`tab-${name}`}
            >
              {label}
            </a>
          ))}
        </nav>
      )}
      <main id="main" tabIndex={-1} class="content">
        {users.error && users.error.status !== 401 && <ErrorBox error={users.error} what="the users" />}
        {body}
      </main>
    </div>
  );
}

function App() {
  const [key, setKeyState] = useState(() => getKey());
  const [reason, setReason] = useState("");
  useEffect(() => {
    whenUnauthorized(() => {
      forgetKey();
      setReason("The server refused the API key (wrong, expired or revoked). Enter it again.");
      setKeyState("");
    });
  }, []);
  if (!key)
    return (
      <KeyForm
        reason={reason}
        onRetry={() => setReason("")}
        onKey={(k) => {
          setReason("");
          setKeyState(k);
        }}
      />
    );
  return (
    <Shell
      key={key}
      onSignOut={() => {
        forgetKey();
        setReason("");
        setKeyState("");
      }}
    />
  );
}

takeKeyFromFragment();
render(<App />, document.getElementById("app"));
