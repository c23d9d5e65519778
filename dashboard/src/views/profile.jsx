// A user's profile: current cards by category and key, with their sources, history and the
// lifecycle actions (pin, edit, archive / restore, delete).
import { useEffect, useState } from "preact/hooks";
import { api } from "../api.js";
import { Badge, Empty, ErrorBox, Loaded, Loading, Meter, fmtTime, pct, useLoad } from "../ui.jsx";

const enc = encodeURIComponent;

async function loadProfile(user) {
  const [profile, all, active] = await Promise.all([
    api("/v1/profile", { query: { user_id: user } }),
    api("/v1/facts", { query: { user_id: user, include_archived: true } }),
    api("/v1/facts", { query: { user_id: user } }),
  ]);
  const activeIds = new Set(active.facts.map((c) => c.id));
  const archived = all.facts.filter((c) => !activeIds.has(c.id) && c.status !== "superseded");
  return { profile: profile.profile, archived, count: active.facts.length };
}

function Sources({ card, user }) {
  const state = useLoad(
    () =>
      api(`/v1/facts/${enc(card.id)}/sources`, { query: { user_id: user } }).catch((e) => {
        if (e.status === 404) return { missing: true };
        throw e;
      }),
    [card.id, user],
  );
  return (
    <div class="sources" data-testid="sources">
      <h4>Original messages</h4>
      <Loaded state={state} what="the sources">
        {(data) =>
          data.missing ? (
            <p class="muted">Source events: {card.sources.join(", ")} (this server cannot show them).</p>
          ) : !data.sources.length ? (
            <Empty>The original messages were deleted.</Empty>
          ) : (
            <ul class="messages">
              {data.sources.map((m) => (
                <li data-testid="source-message">
                  <div class="message-meta">
                    <Badge>{m.role}</Badge> {m.name && <strong>{m.name}</strong>}{" "}
                    <span class="muted">
                      {fmtTime(m.timestamp)} · session {m.session_id} · {m.id}
                    </span>
                  </div>
                  <div class="message-text">{m.content}</div>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </div>
  );
}

function History({ card, user }) {
  const state = useLoad(
    () => api(`/v1/facts/${enc(card.id)}/history`, { query: { user_id: user } }),
    [card.id, user],
  );
  return (
    <div class="history" data-testid="history">
      <h4>History (oldest first)</h4>
      <Loaded state={state} what="the history">
        {(data) =>
          !data.history.length ? (
            <Empty>No history.</Empty>
          ) : (
            <ol class="versions">
              {data.history.map((v) => (
                <li
                  data-testid="history-entry"
                  data-status={v.status}
                  class={v.status === "superseded" ? "superseded" : ""}
                >
                  <span class="statement">{v.statement}</span>{" "}
                  <Badge tone={v.status === "current" ? "ok" : v.status === "flagged" ? "warn" : "muted"}>
                    {v.status}
                  </Badge>{" "}
                  <span class="muted">
                    {v.id} · recorded {fmtTime(v.recorded_at)}
                    {v.valid_from ? ` · valid from ${fmtTime(v.valid_from)}` : ""}
                    {v.valid_to ? ` to ${fmtTime(v.valid_to)}` : ""}
                    {v.superseded_by ? ` · superseded by ${v.superseded_by}` : ""}
                  </span>
                </li>
              ))}
            </ol>
          )
        }
      </Loaded>
    </div>
  );
}

function EditForm({ card, user, onDone, onCancel }) {
  const [statement, setStatement] = useState(card.statement);
  const [reason, setReason] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = { user_id: user, statement: statement.trim() };
      if (reason.trim()) body.reason = reason.trim();
      const result = await api(`/v1/facts/${enc(card.id)}`, { method: "PUT", body });
      onDone(result);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="edit-form" onSubmit={submit} data-testid="edit-form">
      <label for={`edit-${card.id}`}>New statement (saved as a new version that supersedes this one)</label>
      <textarea
        id={`edit-${card.id}`}
        rows={2}
        value={statement}
        onInput={(e) => setStatement(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            e.currentTarget.form.requestSubmit();
          }
        }}
        data-testid="edit-statement"
      />
      <label for={`reason-${card.id}`}>Reason (optional)</label>
      <input id={`reason-${card.id}`} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      {error && <ErrorBox error={error} />}
      <div class="row">
        <button type="submit" class="primary" disabled={busy || !statement.trim()} data-testid="edit-save">
          {busy ? "Saving…" : "Save new version"}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Card({ card, user, archived, open, setOpen, act, onEdited }) {
  const panel = open.id === card.id ? open.panel : null;
  const toggle = (name) => setOpen(panel === name ? {} : { id: card.id, panel: name });
  return (
    <article
      class={`fact-card ${card.pinned ? "pinned" : ""} ${archived ? "archived" : ""}`}
      data-testid="fact-card"
      data-fact-id={card.id}
    >
      <div class="fact-head">
        <p class="statement" data-testid="fact-statement">
          {card.statement}
        </p>
        <code class="fact-id">{card.id}</code>
      </div>
      <div class="fact-meta">
        {card.pinned && (
          <Badge tone="pin" testid="pinned-badge">
            pinned
          </Badge>
        )}
        <Badge tone={card.stability === "stable" ? "ok" : ""} title="stability">
          {card.stability}
        </Badge>
        <span class="metric" title="confidence">
          confidence <Meter value={card.confidence} label={`confidence ${pct(card.confidence)}`} /> {pct(card.confidence)}
        </span>
        <span class="metric" title="importance">
          importance <Meter value={card.importance} tone="accent" label={`importance ${pct(card.importance)}`} />{" "}
          {pct(card.importance)}
        </span>
        {card.subject && card.subject !== "user" && <span>about <strong>{card.subject}</strong></span>}
        {card.valid_from && <span class="muted">since {fmtTime(card.valid_from)}</span>}
        {card.valid_to && <span class="muted">until {fmtTime(card.valid_to)}</span>}
        {card.supersedes && <Badge tone="muted">supersedes {card.supersedes}</Badge>}
        {card.status !== "current" && <Badge tone="warn">{card.status}</Badge>}
        {archived && <Badge tone="warn">archived</Badge>}
        <span class="muted">by {card.extractor}</span>
      </div>
      <div class="fact-actions">
        <button
          type="button"
          class="link"
          aria-expanded={panel === "sources"}
          onClick={() => toggle("sources")}
          data-testid="sources-button"
        >
          Sources ({card.sources.length})
        </button>
        <button
          type="button"
          class="link"
          aria-expanded={panel === "history"}
          onClick={() => toggle("history")}
          data-testid="history-button"
        >
          History
        </button>
        {!archived && (
          <>
            <button
              type="button"
              onClick={() => act(card, card.pinned ? "unpin" : "pin")}
              data-testid={card.pinned ? "unpin-button" : "pin-button"}
            >
              {card.pinned ? "Unpin" : "Pin"}
            </button>
            <button type="button" onClick={() => toggle("edit")} data-testid="edit-button">
              Edit
            </button>
            <button type="button" onClick={() => act(card, "archive")} data-testid="archive-button">
              Archive
            </button>
          </>
        )}
        {archived && (
          <button type="button" onClick={() => act(card, "restore")} data-testid="restore-button">
            Restore
          </button>
        )}
        <button type="button" class="danger" onClick={() => act(card, "delete")} data-testid="delete-button">
          Delete
        </button>
      </div>
      {panel === "sources" && <Sources card={card} user={user} />}
      {panel === "history" && <History card={card} user={user} />}
      {panel === "edit" && (
        <EditForm card={card} user={user} onDone={onEdited} onCancel={() => setOpen({})} />
      )}
    </article>
  );
}

export function ProfileView({ user, params }) {
  const state = useLoad(() => loadProfile(user), [user]);
  const focus = params.get("fact");
  const [open, setOpen] = useState(focus ? { id: focus, panel: "history" } : {});
  // a deep link to a card (#/users/<id>/profile?fact=fact_3): scroll to it, history open
  useEffect(() => {
    if (!focus || !state.data) return;
    setOpen({ id: focus, panel: "history" });
    const element = document.querySelector(`[data-fact-id="${CSS.escape(focus)}"]`);
    if (element) {
      element.scrollIntoView({ block: "center" });
      element.classList.add("focused");
    }
  }, [focus, state.data]);
  const [notice, setNotice] = useState(null);
  const [filter, setFilter] = useState("");

  const act = async (card, action) => {
    setNotice(null);
    try {
      if (action === "delete") {
        if (!window.confirm(`Delete ${card.id} ("${card.statement}") for good?`)) return;
        await api(`/v1/memories/${enc(card.id)}`, { method: "DELETE", query: { user_id: user } });
      } else {
        const body = { user_id: user };
        if (action === "archive") body.reason = "archived from the dashboard";
        await api(`/v1/memories/${enc(card.id)}/${action}`, { method: "POST", body });
      }
      const done = { pin: "Pinned", unpin: "Unpinned", archive: "Archived", restore: "Restored", delete: "Deleted" };
      setNotice({ tone: "ok", text: `${done[action]} ${card.id}.` });
      state.reload();
    } catch (failure) {
      setNotice({ tone: "error", error: failure });
    }
  };
  const onEdited = (result) => {
    setNotice({ tone: "ok", text: `Saved ${result.fact.id}: it supersedes ${result.replaced}.` });
    setOpen({ id: result.fact.id, panel: "history" });
    state.reload();
  };

  const matches = (card) => !filter || `${card.statement} ${card.key} ${card.category}`.toLowerCase().includes(filter.toLowerCase());

  return (
    <section>
      <div class="view-head">
        <h1>
          Profile of <span data-testid="profile-user">{user}</span>
        </h1>
        <input
          type="search"
          class="filter"
          placeholder="Filter cards…"
          aria-label="Filter cards"
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
      </div>
      <div aria-live="polite">
        {notice && notice.tone === "ok" && (
          <div class="notice" data-testid="notice">
            {notice.text}
          </div>
        )}
        {notice && notice.error && <ErrorBox error={notice.error} />}
      </div>
      {state.error ? (
        <ErrorBox error={state.error} what={`the profile of ${user}`} />
      ) : !state.data ? (
        <Loading what="the profile" />
      ) : (
        (() => {
          const { profile, archived } = state.data;
          const categories = Object.keys(profile).sort();
          if (!categories.length && !archived.length)
            return (
              <Empty>
                No memories of <strong>{user}</strong> yet: nothing was learned from their messages.
              </Empty>
            );
          return (
            <>
              <p class="muted">
                {state.data.count} current cards in {categories.length} categories
                {archived.length ? `, ${archived.length} archived` : ""}.
              </p>
              {categories.map((category) => {
                const keys = Object.keys(profile[category]).sort();
                const shown = keys.filter((k) => profile[category][k].some(matches));
                if (!shown.length) return null;
                return (
                  <section class="category" data-testid="category" data-category={category}>
                    <h2>{category}</h2>
                    <div class="category-body">
                    {shown.map((key) => (
                      <div class="key-group" data-testid="key-group">
                        <h3>
                          <code>{key}</code>
                        </h3>
                        {profile[category][key].filter(matches).map((card) => (
                          <Card card={card} user={user} open={open} setOpen={setOpen} act={act} onEdited={onEdited} />
                        ))}
                      </div>
                    ))}
                    </div>
                  </section>
                );
              })}
              {archived.length > 0 && (
                <section class="category archived-section" data-testid="archived">
                  <h2>Archived</h2>
                  <div class="category-body">
                    {archived.filter(matches).map((card) => (
                      <Card card={card} user={user} archived open={open} setOpen={setOpen} act={act} onEdited={onEdited} />
                    ))}
                  </div>
                </section>
              )}
            </>
          );
        })()
      )}
    </section>
  );
}
