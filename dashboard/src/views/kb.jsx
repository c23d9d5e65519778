// The knowledge base: collections, documents with versions, validity and ACL, abstracts, and
// a search run for a chosen principal.
import { useState } from "preact/hooks";
import { allows, useKeyInfo } from "../scopes.js";
import { api } from "../api.js";
import { Badge, Empty, ErrorBox, Loaded, Loading, RawJson, Table, fmtNum, fmtTime, useLoad } from "../ui.jsx";

const enc = encodeURIComponent;

function validity(doc) {
  if (!doc.effective_from && !doc.expires_at) return "always";
  return `${doc.effective_from ? fmtTime(doc.effective_from) : "…"} → ${doc.expires_at ? fmtTime(doc.expires_at) : "…"}`;
}

function ValidNow({ doc }) {
  const now = Date.now();
  if (doc.expires_at && Date.parse(doc.expires_at) <= now) return <Badge tone="bad">expired</Badge>;
  if (doc.effective_from && Date.parse(doc.effective_from) > now) return <Badge tone="warn">not yet</Badge>;
  return <Badge tone="ok">in force</Badge>;
}

function Versions({ collection, doc }) {
  const state = useLoad(
    () => api(`/v1/kb/${enc(collection)}/documents/${doc.doc_id.split("/").map(enc).join("/")}/versions`),
    [collection, doc.doc_id, doc.version],
  );
  return (
    <Loaded state={state} what="the versions">
      {(data) => (
        <ol class="versions" data-testid="doc-versions">
          {data.versions.map((v) => {
            // a version holds until the next one takes effect (or its own end, if sooner)
            const next = data.versions.find((w) => w.version > v.version);
            const replaced = next && (next.effective_from || next.created_at);
            const until = replaced && (!v.expires_at || Date.parse(replaced) < Date.parse(v.expires_at));
            const shown = until ? { ...v, expires_at: replaced } : v;
            return (
              <li data-testid="doc-version">
                <strong>v{v.version}</strong> {v.title}{" "}
                <span class="muted">
                  · created {fmtTime(v.created_at)} · valid {validity(shown)}
                  {until ? ` (replaced by v${next.version})` : ""} · {v.chunks} chunks
                </span>
                <div class="muted small">{v.l0}</div>
              </li>
            );
          })}
        </ol>
      )}
    </Loaded>
  );
}

function Documents({ collection }) {
  const state = useLoad(() => api(`/v1/kb/${enc(collection)}/documents`), [collection]);
  const [open, setOpen] = useState(null);
  return (
    <Loaded state={state} what={`the documents of ${collection}`}>
      {(data) =>
        !data.documents.length ? (
          <Empty>No documents in {collection}.</Empty>
        ) : (
          <Table testid="documents" caption={`Documents of ${collection}`}>
            <thead>
              <tr>
                <th>Document</th>
                <th class="num">Version</th>
                <th>Source</th>
                <th>Valid</th>
                <th>ACL</th>
                <th>Abstract</th>
              </tr>
            </thead>
            <tbody>
              {data.documents.map((doc) => (
                <>
                  <tr data-testid="document-row">
                    <td>
                      <button type="button" class="link" aria-expanded={open === doc.doc_id} onClick={() => setOpen(open === doc.doc_id ? null : doc.doc_id)}>
                        {doc.title || doc.doc_id}
                      </button>
                      <div class="muted small">
                        <code>{doc.doc_id}</code>
                      </div>
                    </td>
                    <td class="num">v{doc.version}</td>
                    <td>{doc.source_type}</td>
                    <td>
                      <ValidNow doc={doc} /> <div class="small muted">{validity(doc)}</div>
                    </td>
                    <td>{doc.acl && doc.acl.length ? doc.acl.map((a) => <Badge tone="warn">{a}</Badge>) : <Badge tone="ok">everyone</Badge>}</td>
                    <td class="abstract">{doc.l1 || doc.l0}</td>
                  </tr>
                  {open === doc.doc_id && (
                    <tr>
                      <td colSpan={6}>
                        <Versions collection={collection} doc={doc} />
                      </td>
                    </tr>
                  )}
                </>
              ))}
            </tbody>
          </Table>
        )
      }
    </Loaded>
  );
}

function KBSearch({ user, collections }) {
  const [form, setForm] = useState({ query: "", who: "user", userId: user, groups: "", collection: "" });
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    if (!form.query.trim()) return;
    setBusy(true);
    const body = { query: form.query.trim(), limit: 10 };
    if (form.who === "user") {
      body.principal = {
        user_id: form.userId.trim() || null,
        groups: form.groups.split(",").map((g) => g.trim()).filter(Boolean),
      };
    }
    if (form.collection) body.collections = [form.collection];
    try {
      setResult({ hits: (await api("/v1/kb/search", { method: "POST", body })).hits });
    } catch (error) {
      setResult({ error });
    } finally {
      setBusy(false);
    }
  };
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  return (
    <div class="card">
      <h2>Search the knowledge base</h2>
      <form class="search-form" onSubmit={submit} data-testid="kb-search-form">
        <div class="field grow">
          <label for="kb-q">Query</label>
          <input id="kb-q" type="search" value={form.query} onInput={set("query")} data-testid="kb-query" />
        </div>
        <div class="field">
          <label for="kb-who">Principal</label>
          <select id="kb-who" value={form.who} onChange={set("who")} data-testid="kb-principal">
            <option value="user">a user and groups</option>
            <option value="none">none (public documents only)</option>
          </select>
        </div>
        {form.who === "user" && (
          <>
            <div class="field">
              <label for="kb-user">User id</label>
              <input id="kb-user" value={form.userId} onInput={set("userId")} />
            </div>
            <div class="field">
              <label for="kb-groups">Groups (comma-separated)</label>
              <input id="kb-groups" value={form.groups} onInput={set("groups")} placeholder="staff, admins" />
            </div>
          </>
        )}
        <div class="field">
          <label for="kb-coll">Collection</label>
          <select id="kb-coll" value={form.collection} onChange={set("collection")}>
            <option value="">all</option>
            {collections.map((c) => (
              <option value={c.name}>{c.name}</option>
            ))}
          </select>
        </div>
        <button type="submit" class="primary" disabled={busy || !form.query.trim()}>
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      {busy && <Loading what="results" />}
      {result && result.error && <ErrorBox error={result.error} what="the knowledge-base search" />}
      {result && result.hits && !result.hits.length && (
        <Empty testid="kb-no-hits">Nothing found that this principal may read.</Empty>
      )}
      {result && result.hits && result.hits.length > 0 && (
        <ol class="hits">
          {result.hits.map((h) => (
            <li class="hit" data-testid="kb-hit">
              <div class="hit-head">
                <span class="score">{fmtNum(h.score)}</span>
                <strong>{h.title || h.doc_id}</strong>
                <span class="muted">
                  {h.collection} · v{h.version} · {h.source_type}
                  {h.section ? ` · ${h.section}` : ""}
                </span>
              </div>
              <div class="hit-text">{h.text}</div>
              <RawJson value={h.explain} summary="Explain" />
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

export function KnowledgeView({ user }) {
  const info = useKeyInfo();
  const admin = allows(info, "admin");
  const state = useLoad(() => (admin ? api("/v1/kb") : null), [admin]);
  const [chosen, setChosen] = useState(null);
  if (!admin) {
    // listings bypass the documents' ACLs: without admin, only searching as a principal
    const named = ((info && info.collections) || []).map((name) => ({ name }));
    return (
      <section>
        <h1>Knowledge base</h1>
        <KBSearch user={user} collections={named} />
        <p class="muted" data-testid="kb-needs-admin">
          Collections and documents are listed for keys with the <code>admin</code> scope only (a listing shows
          every document, whatever its ACL).
        </p>
      </section>
    );
  }
  return (
    <section>
      <h1>Knowledge base</h1>
      <Loaded state={state} what="the collections">
        {(data) => {
          const collections = data.collections;
          const current = chosen || (collections[0] && collections[0].name);
          return (
            <>
              <KBSearch user={user} collections={collections} />
              {!collections.length ? (
                <Empty>No collections yet: add documents with <code>POST /v1/kb/&lt;collection&gt;/documents</code>.</Empty>
              ) : (
                <div class="kb-layout">
                  <ul class="collections" data-testid="collections">
                    {collections.map((c) => (
                      <li>
                        <button
                          type="button"
                          class={c.name === current ? "collection active" : "collection"}
                          aria-pressed={c.name === current}
                          onClick={() => setChosen(c.name)}
                          data-testid="collection"
                        >
                          <strong>{c.name}</strong> <span class="muted">{c.documents} docs · {c.chunks} chunks</span>
                          {c.description && <div class="small">{c.description}</div>}
                        </button>
                      </li>
                    ))}
                  </ul>
                  <div class="kb-docs">
                    {collections
                      .filter((c) => c.name === current)
                      .map((c) => (
                        <>
                          <h2>{c.name}</h2>
                          {c.l1 && <p class="abstract muted">{c.l1}</p>}
                          <Documents collection={c.name} />
                        </>
                      ))}
                  </div>
                </div>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
