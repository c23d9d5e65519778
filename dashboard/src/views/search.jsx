// Search explain: the fused ranking with each stage's part, and the context an agent gets.
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { navigate } from "../router.js";
import { Badge, Empty, ErrorBox, Loading, Meter, RawJson, Table, fmtNum, fmtTime, plural, toIso } from "../ui.jsx";

const CHANNEL_ORDER = ["dense", "bm25", "graph", "facts", "entities", "time", "sessions"];

// Stages after fusion that add to the score (their "contribution") ...
const ADDITIVE = ["window", "session", "entities", "dated", "time", "facts", "current"];
// ... and those that scale it (their "factor").
const FACTORS = ["decay", "strength", "phatic", "route", "source"];

/** Each stage's part of a hit's score, in the order the engine applies them. */
export function stagesOf(explain) {
  const rows = [];
  for (const name of ADDITIVE) {
    const entry = explain[name];
    if (entry && typeof entry.contribution === "number")
      rows.push({ stage: name, kind: "add", value: entry.contribution, detail: entry });
  }
  for (const [name, entry] of Object.entries(explain)) {
    if (ADDITIVE.includes(name) || FACTORS.includes(name) || name === "rerank") continue;
    if (entry && typeof entry === "object" && typeof entry.contribution === "number")
      rows.push({ stage: name, kind: "add", value: entry.contribution, detail: entry });
  }
  for (const name of FACTORS) {
    const entry = explain[name];
    if (entry && typeof entry.factor === "number")
      rows.push({ stage: name, kind: "scale", value: entry.factor, detail: entry });
  }
  if (explain.rerank) rows.push({ stage: "rerank", kind: "rerank", value: explain.rerank.score, detail: explain.rerank });
  if (typeof explain.fact_weight === "number")
    rows.push({ stage: "fact weight", kind: "scale", value: explain.fact_weight, detail: {} });
  if (typeof explain.diversity_penalty === "number")
    rows.push({ stage: "diversity", kind: "add", value: -explain.diversity_penalty, detail: {} });
  return rows;
}

function Explain({ hit }) {
  const explain = hit.explain || {};
  const channels = Object.entries(explain.channels || {}).sort(
    ([a], [b]) => (CHANNEL_ORDER.indexOf(a) + 99) % 99 - (CHANNEL_ORDER.indexOf(b) + 99) % 99,
  );
  const stages = stagesOf(explain);
  const maxAdd = Math.max(0.0001, explain.base || 0, ...stages.filter((s) => s.kind === "add").map((s) => Math.abs(s.value)));
  return (
    <div class="explain" data-testid="explain">
      <div class="explain-grid">
        <div>
          <h4>Recall channels</h4>
          {!channels.length ? (
            <p class="muted">No channel recalled it directly.</p>
          ) : (
            <Table caption="Recall channels">
              <thead>
                <tr>
                  <th>Channel</th>
                  <th class="num">Rank</th>
                  <th class="num">Raw</th>
                  <th>Calibrated</th>
                </tr>
              </thead>
              <tbody>
                {channels.map(([name, info]) => (
                  <tr data-testid="channel-row" data-channel={name}>
                    <th scope="row">{name}</th>
                    <td class="num">{info.rank ?? "—"}</td>
                    <td class="num">{fmtNum(info.score)}</td>
                    <td>
                      <Meter value={info.calibrated || 0} label={`${name} ${fmtNum(info.calibrated)}`} />{" "}
                      {fmtNum(info.calibrated)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </div>
        <div>
          <h4>Score, stage by stage</h4>
          <Table caption="Stages">
            <thead>
              <tr>
                <th>Stage</th>
                <th>Effect</th>
                <th class="num">Value</th>
              </tr>
            </thead>
            <tbody>
              {typeof explain.base === "number" ? (
                <tr data-testid="stage-row" data-stage="fusion">
                  <th scope="row">fusion ({explain.fusion || "—"})</th>
                  <td>
                    <Meter value={explain.base} max={maxAdd} label="fused base score" />
                  </td>
                  <td class="num" data-testid="stage-value">{fmtNum(explain.base)}</td>
                </tr>
              ) : (
                <tr>
                  <th scope="row">fusion ({explain.fusion || "—"})</th>
                  <td colSpan={2} class="muted small">
                    {hit.kind === "fact" ? "facts are fused in their own index, then weighted" : "—"}
                  </td>
                </tr>
              )}
              {stages.map((s) => (
                <tr data-testid="stage-row" data-stage={s.stage}>
                  <th scope="row">{s.stage}</th>
                  <td>
                    {s.kind === "add" ? (
                      <Meter value={Math.abs(s.value)} max={maxAdd} tone={s.value < 0 ? "neg" : "accent"} label={`${s.stage} adds ${fmtNum(s.value)}`} />
                    ) : s.kind === "scale" ? (
                      <span class="muted">× factor</span>
                    ) : (
                      <span class="muted">blended by {s.detail.by}</span>
                    )}
                  </td>
                  <td class="num" data-testid="stage-value">
                    {s.kind === "add" ? (s.value >= 0 ? "+" : "") + fmtNum(s.value, 4) : s.kind === "scale" ? "×" + Number(s.value).toFixed(3) : fmtNum(s.value)}
                  </td>
                </tr>
              ))}
              <tr class="total">
                <th scope="row">final</th>
                <td />
                <td class="num">{fmtNum(explain.fused ?? hit.score)}</td>
              </tr>
            </tbody>
          </Table>
        </div>
      </div>
      {explain.graph && (
        <p class="muted">
          Graph path: {explain.graph.path.join(" → ")} (seeds:{" "}
          {explain.graph.seeds.map((s) => `${s.entity} via ${s.how}`).join(", ")})
        </p>
      )}
      {explain.truth && (
        <p class="muted">
          Truth: {Object.entries(explain.truth).map(([k, v]) => `${k} ${v}`).join(" · ")}
        </p>
      )}
      {explain.ms && <p class="muted">Time: {Object.entries(explain.ms).map(([k, v]) => `${k} ${v} ms`).join(" · ")}</p>}
      <RawJson value={explain} summary="Raw explain" />
    </div>
  );
}

function Hit({ hit, rank, user }) {
  const [open, setOpen] = useState(rank === 1);
  return (
    <li class="hit" data-testid="hit" data-hit-id={hit.id} data-kind={hit.kind}>
      <div class="hit-head">
        <span class="rank">#{rank}</span>
        <span class="score" title="final score">{fmtNum(hit.score)}</span>
        <Badge tone={hit.kind === "fact" ? "ok" : ""}>{hit.kind}</Badge>
        <span class="hit-text">{hit.text}</span>
      </div>
      <div class="via">
        {Object.entries((hit.explain && hit.explain.channels) || {}).map(([name, info]) => (
          <span class="chip" title={`${name}: rank ${info.rank ?? "—"}, calibrated ${fmtNum(info.calibrated)}`}>
            {name}
            {info.rank ? ` #${info.rank}` : ""}
          </span>
        ))}
      </div>
      <div class="hit-meta muted">
        {hit.id} · {fmtTime(hit.timestamp)}
        {hit.session_id ? ` · session ${hit.session_id}` : ""}
        {hit.source_ids && hit.source_ids.length ? ` · sources ${hit.source_ids.join(", ")}` : ""}
        {" · "}
        <button type="button" class="link" onClick={() => navigate(["users", user, "graph"], { around: hit.id })}>
          show in graph
        </button>
        {hit.kind === "fact" && (
          <button type="button" class="link" onClick={() => navigate(["users", user, "profile"], { fact: hit.id })}>
            open card
          </button>
        )}
      </div>
      <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)} data-testid="explain-toggle">
        {open ? "Hide explain" : "Explain"}
      </button>
      {open && <Explain hit={hit} />}
    </li>
  );
}

// the per-query stage switches (`stages` of /v1/search); only the ones changed are sent
const SWITCHES = [
  ["windows", true],
  ["sessions", true],
  ["entities", true],
  ["dated", true],
  ["time", true],
  ["phatic", true],
  ["decay", true],
  ["strength", true],
  ["truth", true],
  ["rerank", false],
];

function StageSwitches({ overrides, setOverrides }) {
  const changed = Object.keys(overrides).length;
  return (
    <details class="stage-switches" data-testid="stage-switches">
      <summary>Stages{changed ? ` (${changed} changed)` : ""}</summary>
      <div class="row">
        <label class="check">
          fusion{" "}
          <select
            value={overrides.fusion || ""}
            onChange={(e) => {
              const next = { ...overrides };
              if (e.currentTarget.value) next.fusion = e.currentTarget.value;
              else delete next.fusion;
              setOverrides(next);
            }}
          >
            <option value="">server default</option>
            <option value="weighted">weighted</option>
            <option value="rrf">rrf</option>
          </select>
        </label>
        {SWITCHES.map(([name, on]) => (
          <label class="check">
            <input
              type="checkbox"
              checked={overrides[name] ?? on}
              onChange={(e) => {
                const next = { ...overrides };
                if (e.currentTarget.checked === on) delete next[name];
                else next[name] = e.currentTarget.checked;
                setOverrides(next);
              }}
            />{" "}
            {name}
          </label>
        ))}
        {changed > 0 && (
          <button type="button" class="link" onClick={() => setOverrides({})}>
            reset
          </button>
        )}
      </div>
    </details>
  );
}

export function SearchView({ user, params, info }) {
  const [overrides, setOverrides] = useState({});
  const [form, setForm] = useState({
    query: params.get("q") || "",
    limit: 10,
    budget: 1000,
    asOf: "",
    start: "",
    end: "",
    history: false,
  });
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (name) => (e) =>
    setForm({ ...form, [name]: e.currentTarget.type === "checkbox" ? e.currentTarget.checked : e.currentTarget.value });

  const submit = async (e) => {
    if (e) e.preventDefault();
    if (!form.query.trim()) return;
    setBusy(true);
    const common = { query: form.query.trim(), user_id: user };
    const asOf = toIso(form.asOf);
    if (asOf) common.as_of = asOf;
    const start = toIso(form.start);
    const end = toIso(form.end);
    if (start || end) common.time_range = [start || null, end || null];
    if (Object.keys(overrides).length) common.stages = overrides;
    const [search, context] = await Promise.allSettled([
      api("/v1/search", { method: "POST", body: { ...common, limit: Number(form.limit) || 10, include_history: form.history } }),
      api("/v1/context", { method: "POST", body: { ...common, budget_tokens: Number(form.budget) || 1000 } }),
    ]);
    setResult({ search, context });
    setBusy(false);
  };

  return (
    <section>
      <h1>Search explain</h1>
      {info === null && (
        <Empty testid="no-memories">
          No memories for user <strong>{user}</strong> yet: a search finds nothing.
        </Empty>
      )}
      <form class="search-form card" onSubmit={submit} data-testid="search-form">
        <div class="field grow wide">
          <label for="q">Query</label>
          <input id="q" type="search" value={form.query} onInput={set("query")} placeholder="e.g. where does the user live?" data-testid="search-input" />
        </div>
        <button type="submit" class="primary" disabled={busy || !form.query.trim()} data-testid="search-submit">
          {busy ? "Searching…" : "Search"}
        </button>
        <div class="break" />
        <div class="field">
          <label for="as-of">
            As of <span class="utc">(UTC)</span>
          </label>
          <input id="as-of" type="datetime-local" value={form.asOf} onInput={set("asOf")} data-testid="as-of" />
        </div>
        <div class="field">
          <label for="start">
            From <span class="utc">(UTC)</span>
          </label>
          <input id="start" type="datetime-local" value={form.start} onInput={set("start")} />
        </div>
        <div class="field">
          <label for="end">
            To <span class="utc">(UTC)</span>
          </label>
          <input id="end" type="datetime-local" value={form.end} onInput={set("end")} />
        </div>
        <div class="field small">
          <label for="limit">Hits</label>
          <input id="limit" type="number" min="1" max="100" value={form.limit} onInput={set("limit")} />
        </div>
        <div class="field small">
          <label for="budget">Context tokens</label>
          <input id="budget" type="number" min="50" max="100000" step="50" value={form.budget} onInput={set("budget")} />
        </div>
        <label class="check">
          <input type="checkbox" checked={form.history} onChange={set("history")} /> include history
        </label>
        <StageSwitches overrides={overrides} setOverrides={setOverrides} />
      </form>
      {busy && <Loading what="results" />}
      {result && (
        <div class="search-results">
          <div class="hits-col">
            <h2>Ranking</h2>
            {result.search.status === "rejected" ? (
              <ErrorBox error={result.search.reason} what="the search" onRetry={() => submit()} />
            ) : !result.search.value.hits.length ? (
              <Empty testid="no-hits">
                {info === null ? `No memories for user ${user} yet.` : "Nothing found for this query."}
              </Empty>
            ) : (
              <ol class="hits">
                {result.search.value.hits.map((hit, i) => (
                  <Hit hit={hit} rank={i + 1} user={user} key={hit.id} />
                ))}
              </ol>
            )}
          </div>
          <div class="context-col">
            <h2>Context handed to the agent</h2>
            {result.context.status === "rejected" ? (
              <ErrorBox error={result.context.reason} what="the context" onRetry={() => submit()} />
            ) : (
              <ContextPanel context={result.context.value} />
            )}
          </div>
        </div>
      )}
    </section>
  );
}

function ContextPanel({ context }) {
  return (
    <div class="context card" data-testid="context">
      <p>
        <strong data-testid="context-tokens">
          {context.tokens} / {context.budget_tokens} tokens
        </strong>{" "}
        <Meter value={context.tokens} max={context.budget_tokens} label="tokens used" /> ·{" "}
        <span data-testid="context-summary">
          {plural(context.items.length, "memory", "memories")}
          {context.kb_items.length ? `, ${plural(context.kb_items.length, "knowledge-base passage")}` : ""}
          {context.window.length ? `, ${plural(context.window.length, "recent turn")}` : ""}
        </span>
      </p>
      {context.clarify && context.clarify.length > 0 && (
        <div class="notice">
          Clarify: {context.clarify.map((c) => c.question || c.message || JSON.stringify(c)).join("; ")}
        </div>
      )}
      {context.text ? (
        <pre class="context-text" data-testid="context-text" tabIndex={0}>
          {context.text}
        </pre>
      ) : (
        <Empty>No memory fits this query: the agent gets an empty context.</Empty>
      )}
    </div>
  );
}
