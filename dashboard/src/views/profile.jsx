// A user's profile: current cards by category and key, with their sources, history and the
// lifecycle actions (pin, edit, archive / restore, delete).
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { useCan } from "../scopes.js";
import { Badge, Empty, ErrorBox, Loaded, Loading, Meter, fmtTime, pct, plural, useLoad } from "../ui.jsx";

const enc = encodeURIComponent;

/** A card's source as the message id the API shows (`3` → `ev_3`). */
export function eventId(source) {
  const text = String(source);
  return /^\d+$/.test(text) ? `ev_${text}` : text;
}

/** The other cards a delete of `card` takes along: those drawn only from its messages (the
 * server erases the messages a card came from, and every card left without a source). */
export function deletedWith(card, cards) {
  const mine = new Set(card.sources.map(eventId));
  if (!mine.size) return [];
  return cards.filter(
    (other) =>
      other.id !== card.id &&
      other.sources.length > 0 &&
      other.sources.every((source) => mine.has(eventId(source))),
  );
}


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
  const box = useRef(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    element.focus();
    element.setSelectionRange(element.value.length, element.value.length);
  }, []);
  const empty = !statement.trim();
  const unchanged = statement.trim() === card.statement.trim();
  const submit = async (e) => {
    e.preventDefault();
    if (busy || empty || unchanged) return;
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
    <form
      class="edit-form"
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          onCancel();
        }
      }}
      data-testid="edit-form"
    >
      <label for={`edit-${card.id}`}>New statement (saved as a new version that supersedes this one)</label>
      <textarea
        id={`edit-${card.id}`}
        ref={box}
        rows={2}
        value={statement}
        onInput={(e) => {
          setStatement(e.currentTarget.value);
          setError(null);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            e.currentTarget.form.requestSubmit();
          }
        }}
        aria-describedby={`slot-${card.id}`}
        data-testid="edit-statement"
      />
      <p class="muted small slot" id={`slot-${card.id}`} data-testid="edit-slot">
        {card.key ? (
          <>
            Keeps the slot <code>{card.key}</code> — to change the kind of fact, delete it and add a
            new memory.
          </>
        ) : (
          "Keeps its category and subject — to change the kind of fact, delete it and add a new memory."
        )}
      </p>
      <label for={`reason-${card.id}`}>Reason (optional)</label>
      <input id={`reason-${card.id}`} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      {error && (
        <div data-testid="edit-error">
          <ErrorBox error={error} title="Not saved" />
        </div>
      )}
      <div class="row">
        <button
          type="submit"
          class="primary"
          disabled={busy || empty || unchanged}
          data-testid="edit-save"
        >
          {busy ? "Saving…" : "Save new version"}
        </button>
        <button type="button" onClick={onCancel} data-testid="edit-cancel">
          Cancel
        </button>
        <span class="muted small">
          {empty ? "The statement is empty." : unchanged ? "Change the statement to save." : "Enter saves, Esc cancels."}
        </span>
      </div>
    </form>
  );
}

function DeleteConfirm({ card, others, archived, busy, onConfirm, onArchive, onCancel }) {
  const cancel = useRef(null);
  useEffect(() => {
    if (cancel.current) cancel.current.focus();
  }, []);
  const events = card.sources.map(eventId);
  const them = events.length === 1 ? "it" : "them";
  return (
    <div
      class="confirm"
      role="alertdialog"
      aria-labelledby={`delete-title-${card.id}`}
      aria-describedby={`delete-text-${card.id}`}
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          onCancel();
        }
      }}
      data-testid="delete-confirm"
    >
      <p id={`delete-title-${card.id}`}>
        <strong>Delete for good?</strong>
      </p>
      <div id={`delete-text-${card.id}`}>
        {events.length ? (
          <p>
            This erases {events.length === 1 ? "the message it came from" : `the ${events.length} messages it came from`},{" "}
            <code>{events.join(", ")}</code>, and every card drawn only from {them}
            {others.length
              ? ` — also ${others.length === 1 ? "this card" : `these ${others.length} cards`}:`
              : `; no other card is drawn only from ${them}.`}
          </p>
        ) : (
          <p>This erases the card (it names no source message).</p>
        )}
        {others.length > 0 && (
          <ul class="also" data-testid="delete-also">
            {others.map((c) => (
              <li>
                {c.statement} <code>{c.id}</code>
                {c.archivedCard ? " (archived)" : ""}
              </li>
            ))}
          </ul>
        )}
        <p>
          {archived
            ? "This card is archived already: that keeps it out of search and context without erasing anything."
            : "To take just this card out of search and context, use Archive instead."}
        </p>
      </div>
      <div class="row">
        <button type="button" class="danger solid" disabled={busy} onClick={onConfirm} data-testid="confirm-delete">
          {busy ? "Deleting…" : "Delete for good"}
        </button>
        <button type="button" ref={cancel} onClick={onCancel} data-testid="cancel-delete">
          Cancel
        </button>
        {!archived && (
          <button type="button" onClick={onArchive} data-testid="archive-instead">
            Archive instead
          </button>
        )}
      </div>
    </div>
  );
}

function Card({ card, user, archived, open, setOpen, act, onEdited, others, deleting }) {
  const write = useCan()("write"); // edits, pins, archive and delete need the write scope
  const panel = open.id === card.id ? open.panel : null;
  const toggle = (name) => setOpen(panel === name ? {} : { id: card.id, panel: name });
  const editButton = useRef(null);
  const deleteButton = useRef(null);
  const close = (button) => {
    setOpen({});
    if (button.current) button.current.focus();
  };
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
        {write && !archived && (
          <>
            <button
              type="button"
              onClick={() => act(card, card.pinned ? "unpin" : "pin")}
              data-testid={card.pinned ? "unpin-button" : "pin-button"}
            >
              {card.pinned ? "Unpin" : "Pin"}
            </button>
            <button
              type="button"
              ref={editButton}
              aria-expanded={panel === "edit"}
              onClick={() => toggle("edit")}
              data-testid="edit-button"
            >
              Edit
            </button>
            <button type="button" onClick={() => act(card, "archive")} data-testid="archive-button">
              Archive
            </button>
          </>
        )}
        {write && archived && (
          <button type="button" onClick={() => act(card, "restore")} data-testid="restore-button">
            Restore
          </button>
        )}
        {write && (
          <button
            type="button"
            class="danger"
            ref={deleteButton}
            aria-expanded={panel === "delete"}
            onClick={() => toggle("delete")}
            data-testid="delete-button"
          >
            Delete
          </button>
        )}
      </div>
      {panel === "sources" && <Sources card={card} user={user} />}
      {panel === "history" && <History card={card} user={user} />}
      {panel === "edit" && (
        <EditForm card={card} user={user} onDone={onEdited} onCancel={() => close(editButton)} />
      )}
      {panel === "delete" && (
        <DeleteConfirm
          card={card}
          others={others}
          archived={archived}
          busy={deleting === card.id}
          onConfirm={() => act(card, "delete")}
          onArchive={() => act(card, "archive")}
          onCancel={() => close(deleteButton)}
        />
      )}
    </article>
  );
}

function allCards(data) {
  const cards = [];
  for (const keys of Object.values(data.profile)) for (const list of Object.values(keys)) cards.push(...list);
  return cards;
}

export function ProfileView({ user, params, info }) {
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
  const [deleting, setDeleting] = useState(null);
  const noticeRef = useRef(null);
  useEffect(() => {
    if (notice && notice.focus && noticeRef.current) noticeRef.current.focus();
  }, [notice]);

  const act = async (card, action) => {
    setNotice(null);
    try {
      if (action === "delete") {
        const before = new Set([...allCards(state.data), ...state.data.archived].map((c) => c.id));
        setDeleting(card.id);
        try {
          await api(`/v1/memories/${enc(card.id)}`, { method: "DELETE", query: { user_id: user } });
        } finally {
          setDeleting(null);
        }
        setOpen({});
        const data = await state.reload();
        const events = card.sources.map(eventId);
        const messages = events.length ? ` and ${events.length === 1 ? "the message" : "the messages"} ${events.join(", ")}` : "";
        if (!data) {
          setNotice({ tone: "ok", focus: true, text: `Deleted ${card.id}${messages}.` });
          return;
        }
        const after = new Set([...allCards(data), ...data.archived].map((c) => c.id));
        const gone = [...before].filter((id) => !after.has(id));
        const back = [...after].filter((id) => !before.has(id));
        setNotice({
          tone: "ok",
          focus: true,
          text:
            `Deleted ${plural(gone.length, "card")} (${gone.join(", ")})${messages}.` +
            (back.length ? ` Current again: ${back.join(", ")} (the version ${card.id} had replaced).` : ""),
        });
        return;
      }
      const body = { user_id: user };
      if (action === "archive") body.reason = "archived from the dashboard";
      await api(`/v1/memories/${enc(card.id)}/${action}`, { method: "POST", body });
      const done = { pin: "Pinned", unpin: "Unpinned", archive: "Archived", restore: "Restored" };
      if (action === "archive") setOpen({});
      setNotice({ tone: "ok", focus: action === "archive", text: `${done[action]} ${card.id}.` });
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

  const needle = filter.trim().toLowerCase();
  const matches = (card) => !needle || `${card.statement} ${card.key} ${card.category}`.toLowerCase().includes(needle);

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
          data-testid="profile-filter"
        />
      </div>
      <div aria-live="polite">
        {notice && notice.tone === "ok" && (
          <div class="notice" data-testid="notice" tabIndex={-1} ref={noticeRef}>
            {notice.text}
          </div>
        )}
        {notice && notice.error && <ErrorBox error={notice.error} title="The change was not made" />}
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
            return info && info.turns ? (
              <Empty testid="no-memories">
                No cards for <strong>{user}</strong> yet: nothing was learned from their{" "}
                {plural(info.turns, "message")}.
              </Empty>
            ) : (
              <Empty testid="no-memories">
                No memories for user <strong>{user}</strong> yet.
              </Empty>
            );
          const current = allCards(state.data);
          const everything = [...current, ...archived.map((c) => ({ ...c, archivedCard: true }))];
          // one card as the page shows it (current or archived), with what a delete would take
          const cardView = (card, isArchived) => (
            <Card
              card={card}
              user={user}
              archived={isArchived}
              open={open}
              setOpen={setOpen}
              act={act}
              onEdited={onEdited}
              others={open.id === card.id && open.panel === "delete" ? deletedWith(card, everything) : []}
              deleting={deleting}
            />
          );
          const shown = current.filter(matches).length;
          const shownArchived = archived.filter(matches).length;
          return (
            <>
              <p class="muted" data-testid="profile-count" aria-live="polite">
                {needle
                  ? `${shown} of ${plural(current.length, "current card")} match “${filter.trim()}”` +
                    (archived.length ? `, ${shownArchived} of ${archived.length} archived` : "") +
                    "."
                  : `${plural(current.length, "current card")} in ${plural(categories.length, "category", "categories")}` +
                    (archived.length ? `, ${archived.length} archived` : "") +
                    "."}
              </p>
              {needle && !shown && !shownArchived && (
                <Empty testid="no-match">No cards match “{filter.trim()}”.</Empty>
              )}
              {categories.map((category) => {
                const keys = Object.keys(profile[category]).sort();
                const shownKeys = keys.filter((k) => profile[category][k].some(matches));
                if (!shownKeys.length) return null;
                return (
                  <section class="category" data-testid="category" data-category={category}>
                    <h2>{category}</h2>
                    <div class="category-body">
                    {shownKeys.map((key) => (
                      <div class="key-group" data-testid="key-group">
                        <h3>
                          <code>{key}</code>
                        </h3>
                        {profile[category][key].filter(matches).map((card) => cardView(card, false))}
                      </div>
                    ))}
                    </div>
                  </section>
                );
              })}
              {archived.length > 0 && shownArchived > 0 && (
                <section class="category archived-section" data-testid="archived">
                  <h2>Archived</h2>
                  <div class="category-body">
                    {archived.filter(matches).map((card) => cardView(card, true))}
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
