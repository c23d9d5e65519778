// Alerts (memory checks), the routing log (write-path decisions), jobs and store stats.
import { api } from "../api.js";
import { href } from "../router.js";
import { Badge, Empty, Loaded, RawJson, Table, fmtTime, useLoad } from "../ui.jsx";
import { useCan } from "../scopes.js";

async function loadStatus() {
  try {
    return { status: await api("/v1/status") };
  } catch (error) {
    if (error.status !== 404) throw error;
    const stats = await api("/v1/stats"); // an older server
    return { status: { stats, pending_jobs: stats.pending_jobs, failed_jobs: stats.failed_jobs } };
  }
}

function Stat({ label, value, tone = "", testid }) {
  return (
    <div class={`stat ${tone}`} data-testid={testid}>
      <div class="stat-value">{value ?? "—"}</div>
      <div class="stat-label">{label}</div>
    </div>
  );
}

function Status({ status }) {
  const stats = status.stats || {};
  const integrity = status.integrity;
  return (
    <>
      <div class="stats" data-testid="status">
        <Stat label="pending jobs" value={status.pending_jobs} tone={status.pending_jobs ? "warn" : ""} testid="pending-jobs" />
        <Stat label="failed jobs" value={status.failed_jobs} tone={status.failed_jobs ? "bad" : ""} />
        <Stat label="users" value={stats.users} />
        <Stat label="events" value={stats.events} />
        <Stat label="facts" value={stats.facts} />
        <Stat label="entities" value={stats.graph && stats.graph.entities} />
        <Stat label="KB documents" value={stats.kb && stats.kb.kb_documents} />
        {integrity && (
          <Stat
            label="integrity"
            value={integrity.consistent ? "consistent" : "INCONSISTENT"}
            tone={integrity.consistent ? "good" : "bad"}
            testid="integrity"
          />
        )}
      </div>
      <p class="muted small">
        {[
          status.version && `Madeleine ${status.version}`,
          status.backend && `${status.backend} backend`,
          stats.embedder && `embedder ${stats.embedder} (${stats.embedder_dim} dims)`,
          stats.database_bytes && `${(stats.database_bytes / 1048576).toFixed(1)} MB`,
        ]
          .filter(Boolean)
          .join(" · ")}
      </p>
      {stats.failures && stats.failures.length > 0 && (
        <div class="error" role="alert">
          Failed jobs: {stats.failures.map((f) => (typeof f === "string" ? f : JSON.stringify(f))).join("; ")}
        </div>
      )}
      <RawJson value={status} summary="Full status" />
    </>
  );
}

export function HealthView({ user }) {
  const admin = useCan()("admin");
  const status = useLoad(() => (admin ? loadStatus() : null), [admin]);
  const alerts = useLoad(() => api("/v1/alerts", { query: { user_id: user } }), [user]);
  const log = useLoad(() => api("/v1/routing-log", { query: { user_id: user, limit: 100 } }), [user]);
  return (
    <section>
      <h1>Alerts &amp; health</h1>
      <div class="card">
        <h2>Store</h2>
        {admin ? (
          <Loaded state={status} what="the server status">
            {(data) => <Status status={data.status} />}
          </Loaded>
        ) : (
          <p class="muted" data-testid="status-needs-admin">
            The store's status is an operator view: it needs a key with the <code>admin</code> scope.
          </p>
        )}
      </div>
      <div class="card">
        <h2>Alerts for {user}</h2>
        <Loaded state={alerts} what="the alerts">
          {(data) =>
            !data.alerts.length ? (
              <Empty testid="no-alerts">No open alerts: the memory checks found nothing wrong.</Empty>
            ) : (
              <ul class="alerts" data-testid="alerts">
                {data.alerts.map((a) => (
                  <li class={`alert sev-${a.severity}`}>
                    <Badge tone={a.severity === "error" || a.severity === "high" ? "bad" : "warn"}>{a.severity}</Badge>{" "}
                    <strong>{a.rule}</strong> {a.message}{" "}
                    <span class="muted small">
                      {(a.fact_ids || []).map((id) => (
                        <a href={href(["users", user, "profile"], { fact: id })} class="fact-link">
                          {id}
                        </a>
                      ))}
                      · {fmtTime(a.created_at)}
                    </span>
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </div>
      <div class="card">
        <h2>Routing log for {user}</h2>
        <p class="muted small">The write path's decisions about each extracted fact, newest first.</p>
        <Loaded state={log} what="the routing log">
          {(data) =>
            !data.decisions.length ? (
              <Empty>No decisions yet.</Empty>
            ) : (
              <Table testid="routing-log" caption="Routing log">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Decision</th>
                    <th>Fact</th>
                    <th>Other</th>
                    <th>Statement</th>
                    <th>Why</th>
                  </tr>
                </thead>
                <tbody>
                  {data.decisions.map((d) => (
                    <tr>
                      <td class="nowrap">{fmtTime(d.at)}</td>
                      <td>
                        <Badge tone={d.decision === "added" ? "ok" : d.decision === "superseded" ? "warn" : ""}>{d.decision}</Badge>
                      </td>
                      <td>{d.fact_id ? <a href={href(["users", user, "profile"], { fact: d.fact_id })}><code>{d.fact_id}</code></a> : "—"}</td>
                      <td>{d.other_id ? <code>{d.other_id}</code> : "—"}</td>
                      <td>
                        {d.detail &&
                          (d.detail.statement ||
                            [d.detail.rule, d.detail.facts && d.detail.facts.join(", ")].filter(Boolean).join(": "))}
                      </td>
                      <td class="muted small">
                        {d.detail && [d.detail.reason, d.detail.strategy, d.detail.extractor].filter(Boolean).join(" · ")}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )
          }
        </Loaded>
      </div>
    </section>
  );
}
