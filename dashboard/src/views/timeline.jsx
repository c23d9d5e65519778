// What happened, in order: sessions by day, their turns and facts, supersessions marked.
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { navigate } from "../router.js";
import { Badge, Empty, Loaded, fmtTime, plural, toIso, useLoad } from "../ui.jsx";

const ICON = { turn: "●", fact: "◆", digest: "≡" };

function Item({ item }) {
  const superseded = item.status === "superseded";
  return (
    <li
      class={`tl-item kind-${item.kind} ${superseded ? "superseded" : ""} ${item.archived ? "archived" : ""}`}
      data-testid="timeline-item"
      data-kind={item.kind}
      data-status={item.status}
    >
      <span class="tl-icon" aria-hidden="true">
        {ICON[item.kind] || "•"}
      </span>
      <div class="tl-body">
        <div class="tl-text">
          {item.kind === "fact" && <Badge tone={superseded ? "muted" : "ok"}>fact</Badge>}{" "}
          {item.kind === "digest" && <Badge>digest</Badge>} <span class="statement">{item.text}</span>
        </div>
        <div class="muted small">
          {fmtTime(item.timestamp)} · {item.id}
          {item.speaker ? ` · ${item.speaker}` : ""}
          {item.archived ? " · archived" : ""}
        </div>
        {(item.superseded_by || item.supersedes || item.status === "flagged") && (
          <div class="supersession" data-testid="supersession">
            {item.superseded_by && <span>⤳ superseded by {item.superseded_by}</span>}
            {item.supersedes && <span>replaces {item.supersedes}</span>}
            {item.status === "flagged" && <span>flagged</span>}
          </div>
        )}
      </div>
    </li>
  );
}

export function TimelineView({ user, params, info }) {
  const query = params.get("query") || "";
  const start = params.get("start") || "";
  const end = params.get("end") || "";
  const [form, setForm] = useState({ query, start: start.slice(0, 10), end: end.slice(0, 10), archived: params.get("archived") === "1" });
  const state = useLoad(
    () =>
      api("/v1/timeline", {
        query: { user_id: user, query, start, end, include_archived: params.get("archived") === "1" ? true : undefined },
      }),
    [user, query, start, end, params.get("archived")],
  );
  const submit = (e) => {
    e.preventDefault();
    const next = {};
    if (form.query.trim()) next.query = form.query.trim();
    if (form.start) next.start = toIso(form.start + "T00:00");
    if (form.end) next.end = toIso(form.end + "T23:59:59");
    if (form.archived) next.archived = "1";
    navigate(["users", user, "timeline"], next);
  };
  return (
    <section>
      <h1>Timeline</h1>
      <form class="search-form card" onSubmit={submit}>
        <div class="field grow">
          <label for="tl-query">About</label>
          <input id="tl-query" type="search" value={form.query} placeholder="everything" onInput={(e) => setForm({ ...form, query: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="tl-start">
            From <span class="utc">(UTC day)</span>
          </label>
          <input id="tl-start" type="date" value={form.start} onInput={(e) => setForm({ ...form, start: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="tl-end">
            To <span class="utc">(UTC day, included)</span>
          </label>
          <input id="tl-end" type="date" value={form.end} onInput={(e) => setForm({ ...form, end: e.currentTarget.value })} />
        </div>
        <label class="check">
          <input type="checkbox" checked={form.archived} onChange={(e) => setForm({ ...form, archived: e.currentTarget.checked })} /> archived too
        </label>
        <button type="submit" class="primary">
          Show
        </button>
      </form>
      <Loaded state={state} what="the timeline">
        {(timeline) => {
          if (!timeline.items.length) {
            const filtered = query || start || end || params.get("archived") === "1";
            if (!filtered)
              return (
                <Empty testid="no-memories">
                  No memories for user <strong>{user}</strong> yet.
                </Empty>
              );
            const parts = [];
            if (query) parts.push(`about “${query}”`);
            if (start) parts.push(`from ${start.slice(0, 10)}`);
            if (end) parts.push(`to ${end.slice(0, 10)}`);
            return (
              <Empty testid="timeline-empty">
                Nothing in the timeline of {user} {parts.join(" ")}
                {info === null ? ` (user ${user} has no memories yet)` : ""}. Clear the filters to see everything.
              </Empty>
            );
          }
          const byId = new Map(timeline.items.map((i) => [i.id, i]));
          const changed = timeline.items.filter((i) => i.status === "superseded").length;
          return (
            <>
              {timeline.narrative && (
                <details class="narrative card" open>
                  <summary>
                    Narrative {timeline.llm ? "(written by the LLM)" : "(heuristic)"}
                  </summary>
                  <pre>{timeline.narrative}</pre>
                </details>
              )}
              <p class="muted">
                {plural(timeline.items.length, "item")} in {plural(timeline.groups.length, "session")} ·{" "}
                {plural(changed, "superseded fact")} · times in UTC
                {timeline.truncated ? " · truncated: only the latest are shown" : ""}
              </p>
              {(timeline.notes || []).map((n) => (
                <p class="notice">{n}</p>
              ))}
              <ol class="timeline" data-testid="timeline">
                {timeline.groups.map((group) => (
                  <li class="tl-group" data-testid="timeline-session" data-session={group.session_id || ""}>
                    <div class="tl-day">
                      <time>{group.day}</time>
                      <span class="tl-session">{group.session_id ? `session ${group.session_id}` : "no session"}</span>
                    </div>
                    <ol class="tl-items">
                      {group.items.map((id) => byId.get(id)).filter(Boolean).map((item) => (
                        <Item item={item} />
                      ))}
                    </ol>
                  </li>
                ))}
              </ol>
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
