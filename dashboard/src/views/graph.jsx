// The memory graph around a node: entities, passages and facts; click a node to expand it.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { navigate } from "../router.js";
import { Badge, Empty, ErrorBox, Loading, fmtTime, plural, useLoad } from "../ui.jsx";

let cytoscapeLoading = null;

/** Cytoscape and its layout, fetched the first time a graph is shown. */
function loadCytoscape() {
  if (!cytoscapeLoading) {
    cytoscapeLoading = import("../cy.js").then(
      (module) => module.default,
      (error) => {
        cytoscapeLoading = null;
        throw error;
      },
    );
  }
  return cytoscapeLoading;
}

const COLOURS = {
  entity: "#2563eb",
  speaker: "#ea580c",
  passage: "#64748b",
  fact: "#16a34a",
  other: "#9333ea",
};

export function kindOf(node) {
  if (node.type === "entity" && (node.kind === "speaker" || String(node.id).startsWith("speaker:"))) return "speaker";
  return COLOURS[node.type] ? node.type : "other";
}

function short(text, n = 28) {
  const s = String(text || "");
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

const STYLE = [
  {
    selector: "node",
    style: {
      "background-color": "data(colour)",
      label: "data(short)",
      color: "#1e293b",
      "font-size": 10,
      "text-valign": "bottom",
      "text-margin-y": 3,
      "text-wrap": "ellipsis",
      "text-max-width": 120,
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.75,
      "text-background-padding": 1,
      "min-zoomed-font-size": 6,
      width: 18,
      height: 18,
      "border-width": 0,
    },
  },
  { selector: "node[kind = 'fact']", style: { shape: "round-rectangle", width: 22, height: 14 } },
  { selector: "node[kind = 'passage']", style: { shape: "ellipse", width: 14, height: 14 } },
  { selector: "node[kind = 'entity'], node[kind = 'speaker']", style: { width: 24, height: 24, "font-weight": "bold" } },
  { selector: "node.expanded", style: { "border-width": 3, "border-color": "#0f172a" } },
  { selector: "node:selected", style: { "border-width": 4, "border-color": "#f59e0b" } },
  {
    selector: "edge",
    style: {
      width: 1.2,
      "line-color": "#cbd5e1",
      "curve-style": "bezier",
      label: "",
    },
  },
  { selector: "edge[type = 'source']", style: { "line-color": "#86efac" } },
  { selector: "edge[type = 'next']", style: { "line-style": "dashed" } },
];

function toElements(graph) {
  const nodes = graph.nodes.map((n) => ({
    group: "nodes",
    data: {
      ...n,
      id: n.id,
      label: n.label || n.id,
      short: short(n.label || n.id),
      kind: kindOf(n),
      colour: COLOURS[kindOf(n)],
    },
  }));
  const edges = graph.edges.map((e) => ({
    group: "edges",
    data: { id: `${e.source}->${e.target}`, source: e.source, target: e.target, type: e.type },
  }));
  return [...nodes, ...edges];
}

export function GraphView({ user, params, info }) {
  const around = params.get("around") || "";
  const depth = Number(params.get("depth") || 2);
  const [typed, setTyped] = useState(around);
  const container = useRef(null);
  const cyRef = useRef(null);
  const [counts, setCounts] = useState({ nodes: 0, edges: 0 });
  const [selected, setSelected] = useState(null);
  const [expanding, setExpanding] = useState(null);
  const [said, setSaid] = useState("");
  const [failure, setFailure] = useState(null);
  const [list, setList] = useState([]);

  const entities = useLoad(
    () => api("/v1/entities", { query: { user_id: user, limit: 30 } }).then((r) => r.entities, () => null),
    [user],
  );
  const graph = useLoad(
    () => api("/v1/graph", { query: { user_id: user, around: around || undefined, depth, limit: 150 } }),
    [user, around, depth],
  );

  const refresh = (cy) => {
    setCounts({ nodes: cy.nodes().length, edges: cy.edges().length });
    setList(
      cy
        .nodes()
        .map((n) => ({ id: n.id(), label: n.data("label"), kind: n.data("kind"), expanded: n.hasClass("expanded") }))
        .sort((a, b) => a.kind.localeCompare(b.kind) || a.label.localeCompare(b.label)),
    );
  };

  const layout = (cy, randomize) =>
    cy
      .layout({
        name: "fcose",
        animate: false,
        randomize,
        quality: "default",
        nodeRepulsion: 12000,
        idealEdgeLength: 110,
        nodeSeparation: 90,
        fit: true,
        padding: 30,
        stop: () => {
          if (cy.zoom() > 1.3) {
            cy.zoom(1.3);
            cy.center();
          }
        },
      })
      .run();

  const expand = async (id) => {
    const cy = cyRef.current;
    if (!cy) return;
    setExpanding(id);
    setFailure(null);
    setSaid("");
    try {
      const more = await api("/v1/graph", { query: { user_id: user, around: id, depth: 1, limit: 60 } });
      const fresh = toElements(more).filter((el) => cy.getElementById(el.data.id).empty());
      cy.add(fresh.filter((el) => el.group === "nodes"));
      cy.add(fresh.filter((el) => el.group === "edges" && !cy.getElementById(el.data.source).empty() && !cy.getElementById(el.data.target).empty()));
      cy.getElementById(id).addClass("expanded");
      if (fresh.length) layout(cy, false);
      refresh(cy);
      const added = fresh.filter((el) => el.group === "nodes").length;
      const label = short(cy.getElementById(id).data("label") || id, 40).replace(/[.…]+$/, "");
      setSaid(added ? `${plural(added, "node")} added around ${label}.` : `Nothing new around ${label}: its neighbours are all shown.`);
    } catch (error) {
      setFailure(error);
    } finally {
      setExpanding(null);
    }
  };
  const expandRef = useRef(expand);
  expandRef.current = expand;

  useEffect(() => {
    if (!graph.data || !container.current) return;
    let cy = null;
    let gone = false;
    loadCytoscape().then(
      (cytoscape) => {
        if (gone || !container.current) return;
        cy = draw(cytoscape);
      },
      () => setFailure({ status: 0, message: "The graph viewer's script did not load." }),
    );
    return () => {
      gone = true;
      if (!cy) return;
      cy.destroy();
      if (window.__madeleineGraph === cy) window.__madeleineGraph = null;
      cyRef.current = null;
    };
  }, [graph.data]);

  const draw = (cytoscape) => {
    const cy = cytoscape({
      container: container.current,
      elements: toElements(graph.data),
      style: STYLE,
      minZoom: 0.2,
      maxZoom: 4,
    });
    cyRef.current = cy;
    window.__madeleineGraph = cy; // for the end-to-end tests and the curious
    const start = cy.getElementById(graph.data.around || around);
    start.addClass("expanded");
    layout(cy, true);
    refresh(cy);
    cy.on("tap", "node", (event) => {
      const node = event.target;
      setSelected(node.data());
      if (!node.hasClass("expanded")) expandRef.current(node.id());
    });
    return cy;
  };

  const go = (id) => navigate(["users", user, "graph"], id ? { around: id, depth } : { depth });
  const zoom = (factor) => {
    const cy = cyRef.current;
    if (cy) cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  };

  return (
    <section>
      <div class="view-head">
        <h1>Graph</h1>
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            go(typed.trim());
          }}
        >
          <label for="around">Around</label>
          <input id="around" list="entity-list" value={typed} placeholder="entity, ep_12, fact_3" title="An entity, a passage (ep_…) or a fact (fact_…); empty: the most mentioned entity" onInput={(e) => setTyped(e.currentTarget.value)} data-testid="graph-around" />
          <datalist id="entity-list">
            {(entities.data || []).map((e) => (
              <option value={e.id}>{e.label} ({e.mentions})</option>
            ))}
          </datalist>
          <label for="depth">Depth</label>
          <select id="depth" value={String(depth)} onChange={(e) => navigate(["users", user, "graph"], { ...(around ? { around } : {}), depth: e.currentTarget.value })}>
            {[1, 2, 3].map((d) => (
              <option value={String(d)}>{d}</option>
            ))}
          </select>
          <button type="submit">Show</button>
        </form>
      </div>
      <div class="legend" aria-label="Legend">
        {Object.entries(COLOURS).map(([name, colour]) => (
          <span class="legend-item">
            <span class="swatch" style={{ background: colour }} /> {name}
          </span>
        ))}
        <span class="muted">Click a node to expand it; drag to pan, scroll to zoom.</span>
      </div>
      {graph.error && <ErrorBox error={graph.error} what={around ? `the graph around ${around}` : "the graph"} />}
      {failure && <ErrorBox error={failure} what="more of the graph" />}
      {graph.loading && !graph.data && <Loading what="the graph" />}
      {graph.data && !graph.data.nodes.length &&
        (around ? (
          <Empty testid="graph-empty">
            Nothing found around <code>{around}</code> for {user}.
          </Empty>
        ) : info && info.turns ? (
          <Empty testid="graph-empty">No graph yet for {user}.</Empty>
        ) : (
          <Empty testid="no-memories">
            No memories for user <strong>{user}</strong> yet.
          </Empty>
        ))}
      {graph.data && graph.data.nodes.length > 0 && (
        <div class="graph-layout">
          <div class="graph-main">
            <div class="graph-toolbar">
              <span data-testid="graph-node-count" data-nodes={counts.nodes}>
                {counts.nodes} nodes · {counts.edges} edges
              </span>
              <span class="muted graph-status" role="status" data-testid="graph-status">
                {expanding ? `expanding ${expanding}…` : said}
              </span>
              <span class="spacer" />
              <button type="button" onClick={() => zoom(1.25)} aria-label="Zoom in">+</button>
              <button type="button" onClick={() => zoom(0.8)} aria-label="Zoom out">−</button>
              <button type="button" onClick={() => cyRef.current && cyRef.current.fit(undefined, 30)}>Fit</button>
              <button type="button" onClick={() => cyRef.current && layout(cyRef.current, true)}>Re-layout</button>
            </div>
            <div class="graph-canvas" ref={container} data-testid="graph-canvas" role="img" aria-label={`Memory graph of ${user}: ${counts.nodes} nodes`} />
          </div>
          <aside class="graph-side">
            {selected ? (
              <div class="card" data-testid="graph-selected">
                <h3>
                  <Badge>{selected.kind}</Badge> {selected.id}
                </h3>
                <p>{selected.label}</p>
                {selected.timestamp && <p class="muted">{fmtTime(selected.timestamp)} · session {selected.session_id}</p>}
                {selected.passages !== undefined && <p class="muted">{plural(selected.passages, "passage")}</p>}
                <button type="button" onClick={() => go(selected.id)}>Centre here</button>
              </div>
            ) : (
              <p class="muted">Select a node to see it here.</p>
            )}
            <h3>Nodes ({list.length})</h3>
            <ul class="node-list" data-testid="node-list">
              {list.map((n) => (
                <li>
                  <span class="swatch" style={{ background: COLOURS[n.kind] }} />
                  <span class="node-label" title={n.label}>{short(n.label, 40)}</span>
                  <button
                    type="button"
                    class="link"
                    disabled={n.expanded}
                    onClick={() => {
                      const node = cyRef.current && cyRef.current.getElementById(n.id);
                      if (node) setSelected(node.data());
                      expand(n.id);
                    }}
                    data-testid="expand-node"
                  >
                    {n.expanded ? "expanded" : "expand"}
                  </button>
                </li>
              ))}
            </ul>
          </aside>
        </div>
      )}
    </section>
  );
}
