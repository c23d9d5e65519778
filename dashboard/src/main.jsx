// The dashboard shell: key intake, header with the user selector, tabs, hash routes.
import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import "./app.css";
import { api, forgetKey, getKey, setKey, takeKeyFromFragment, whenReach, whenUnauthorized } from "./api.js";
import { href, navigate, parseHash, useRoute } from "./router.js";
import { ErrorBox, RetryContext, useLoad } from "./ui.jsx";
import { KeyContext, allows } from "./scopes.js";
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
  const check = async () => {
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
      await api("/v1/whoami", { quiet: true });
      onKey(key);
    } catch (failure) {
      if (failure.status === 401) {
        forgetKey();
        setError({ status: 401 });
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
      <form
        class="key-form card"
        onSubmit={(event) => {
          event.preventDefault();
          check();
        }}
        data-testid="key-form"
      >
        <h1>
          <span class="logo" aria-hidden="true">
            ◐
          </span>{" "}
          Madeleine
        </h1>
        <p class="muted">Memory dashboard. Enter an API key of this server to continue.</p>
        {reason && !error && (
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
        {error && error.status === 401 && (
          <div class="error" role="alert" data-testid="key-error">
            The server refused this key (wrong, expired or revoked): check it and try again.
          </div>
        )}
        {error && error.status !== -1 && error.status !== 401 && (
          <div data-testid="key-error">
            <ErrorBox error={error} onRetry={check} />
          </div>
        )}
        <button type="submit" class="primary" disabled={busy} data-testid="key-submit">
          {busy ? "Checking…" : "Open dashboard"}
        </button>
      </form>
    </main>
  );
}

const OTHER = "\u0000other";

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
          onChange={(e) => {
            const value = e.currentTarget.value;
            if (value === OTHER) {
              e.currentTarget.value = current || "";
              navigate(["users"], { by: "id" }); // the users list, its "open by id" box focused
            } else if (value) navigate(["users", value, tab]);
          }}
        >
          <option value="">— pick a user —</option>
          {!known && current && <option value={current}>{current}</option>}
          {users.map((u) => (
            <option value={u.user_id}>{u.user_id}</option>
          ))}
          <option value={OTHER}>Other user (by id)…</option>
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

// Whether the page was opened without a route (`/`, `#/`, a `#key=…` link): only then does
// a tenant with a single user open that user's profile straight away (set at the bottom).
let autoOpenPending = false;

// users the header lists (a larger tenant opens the others by id)
const USERS_LISTED = 1000;

// the key's scopes and limits, in a few words for the header
function describeKey(info) {
  if (!info) return "";
  const parts = [(info.scopes || []).join(" · ")];
  if (info.collections) parts.push(`collections: ${info.collections.join(", ")}`);
  if (info.users) parts.push(`users: ${info.users.join(", ")}`);
  return parts.join(" — ");
}

function Shell({ onSignOut }) {
  const route = useRoute();
  const [section, user, tab = "profile"] = route.parts;
  const me = useLoad(
    () =>
      api("/v1/whoami").catch((e) => {
        if (e.status === 404 || e.status === 405) return null; // an older server: no scopes
        throw e;
      }),
    [],
  );
  const keyInfo = me.data;
  const users = useLoad(() => {
    if (me.loading) return new Promise(() => {}); // until the key's scopes are known
    if (keyInfo && keyInfo.users) return keyInfo.users.map((id) => ({ user_id: id }));
    if (!allows(keyInfo, "admin")) return null; // listing users is an operator view
    return api(`/v1/users?limit=${USERS_LISTED}`).then(
      (r) => r.users || [],
      (e) => {
        if (e.status === 404 || e.status === 405) return null; // an older server
        throw e;
      },
    );
  }, [me.loading, keyInfo]);
  const health = useLoad(() => api("/health"), []);
  // the latest call's fate: false as soon as one gets no answer, true when one is answered
  const [reach, setReach] = useState(null);
  useEffect(() => {
    whenReach((answered) => setReach(answered));
    return () => whenReach(() => {});
  }, []);
  useEffect(() => {
    if (reach && !health.data && !health.loading) health.reload(); // back: show the version
  }, [reach]);
  useEffect(() => {
    const timer = setInterval(health.reload, 30_000); // say so when the server goes away
    return () => clearInterval(timer);
  }, [health.reload]);
  const [generation, setGeneration] = useState(0);
  const retry = useCallback(() => {
    setGeneration((g) => g + 1); // remount the view: it loads its data again
    if (users.error || !users.data) users.reload();
    health.reload();
  }, [users.error, users.data, users.reload, health.reload]);
  const inUser = section === "users" && user;
  // The first visit (no route) lands on the only user; later `#/` shows the users list.
  useEffect(() => {
    if (!autoOpenPending) return;
    if (section) autoOpenPending = false;
    if (section || users.loading) return;
    autoOpenPending = false;
    if (users.data && users.data.length === 1) {
      history.replaceState(null, "", href(["users", users.data[0].user_id, "profile"]));
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    }
  }, [section, users.data, users.loading]);

  // a user missing from a full page may still exist: unknown (undefined), not "no memories"
  const listedAll = users.data && users.data.length < USERS_LISTED;
  const info =
    inUser && users.data
      ? users.data.find((u) => u.user_id === user) || (listedAll ? null : undefined)
      : undefined;
  let body;
  if (!inUser) {
    body = <UsersView users={users} params={route.params} />;
  } else if (!allows(keyInfo, "read")) {
    body = (
      <p class="muted" data-testid="no-read">
        This key has no <code>read</code> scope: it cannot show a user's memories.
      </p>
    );
  } else {
    // info: the user's row of /v1/users (null: not listed, so no memories; undefined: unknown)
    const props = { user, params: route.params, rest: route.parts.slice(3), info };
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
  const offline = reach === false || (reach === null && health.error && health.error.status === 0);
  const status = offline
    ? { tone: "down", text: "offline", title: "The server did not answer the last request." }
    : health.error
      ? { tone: "down", text: "server error", title: health.error.message }
      : health.data
        ? { tone: "up", text: `v${health.data.version}`, title: "server reachable" }
        : { tone: "", text: "…", title: "checking the server" };
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => {
        e.preventDefault();
        document.getElementById("main")?.focus();
      }}>
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={href([])} data-testid="brand" title="All users">
          <span class="logo" aria-hidden="true">
            ◐
          </span>{" "}
          Madeleine
        </a>
        <a
          class={`users-link ${inUser ? "" : "active"}`}
          href={href(["users"])}
          aria-current={inUser ? undefined : "page"}
          data-testid="users-link"
        >
          Users
        </a>
        <UserPicker users={users.data} loading={users.loading} current={inUser ? user : ""} />
        <span class="spacer" />
        {keyInfo && (
          <span class="key-scopes muted small" data-testid="key-scopes" title="what this API key may do">
            {describeKey(keyInfo)}
          </span>
        )}
        <span
          class={`server-status ${status.tone}`}
          data-testid="server-status"
          data-state={offline ? "offline" : status.tone || "unknown"}
          title={status.title}
          role="status"
        >
          {status.text}
        </span>
        <button type="button" class="ghost" onClick={onSignOut} data-testid="sign-out">
          Sign out
        </button>
      </header>
      {inUser && allows(keyInfo, "read") && (
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
        <KeyContext.Provider value={keyInfo}>
          <RetryContext.Provider value={retry}>
            {me.error && me.error.status !== 401 && <ErrorBox error={me.error} what="this key's scopes" />}
            {users.error && users.error.status !== 401 && <ErrorBox error={users.error} what="the users" />}
            <div key={generation}>{body}</div>
          </RetryContext.Provider>
        </KeyContext.Provider>
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
autoOpenPending = parseHash(window.location.hash).parts.length === 0;
render(<App />, document.getElementById("app"));
