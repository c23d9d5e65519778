"""The graph seen from outside the walk: the viewer behind ``Memory.graph`` and the
footprint the scale bench reports."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from madeleine.graph.entities import SPEAKER_TYPE, entity_key, speaker_key
from madeleine.read.dense import UserRows
from madeleine.sorted_ids import positions

if TYPE_CHECKING:
    from madeleine.read.graph import UserGraph


def top_entities(graph: UserGraph, limit: int) -> list[dict[str, Any]]:
    """The entities most passages mention, speakers last: where a viewer starts."""
    names, types = graph.entities.names, graph.entities.types
    order = sorted(
        range(len(names)),
        key=lambda i: (types[i] == SPEAKER_TYPE, -int(graph.degree[i]), names[i].casefold()),
    )
    return [
        {
            "id": node_label(names[i], types[i]),
            "label": names[i],
            "kind": types[i],
            "mentions": int(graph.degree[i]),
        }
        for i in order[:limit]
    ]


def graph_view(
    graph: UserGraph, user_id: str, cache: UserRows, around: str | None, depth: int, limit: int
) -> dict[str, Any]:
    """Nodes and edges within ``depth`` hops of an entity, speaker, passage (``ep_N``) or
    fact (``fact_N``), breadth-first; ``around=None`` starts at the most mentioned entity
    (an empty view when the user has none)."""
    n_p = graph.passages
    fact_base = n_p + graph.entities.entity_ids.size
    if around is None:
        top = top_entities(graph, 1)
        if not top:
            return {"around": None, "nodes": [], "edges": []}
        around = str(top[0]["id"])
    start = _start(user_id, graph, cache, around)
    indptr, indices = graph.adjacency.indptr, graph.adjacency.indices
    order, seen, frontier = [start], {start}, [start]
    for _ in range(depth):
        grown = []
        for node in frontier:
            for neighbour in indices[indptr[node] : indptr[node + 1]].tolist():
                if neighbour not in seen and len(seen) < limit:
                    seen.add(neighbour)
                    grown.append(neighbour)
        order += grown
        frontier = grown
    names, types = graph.entities.names, graph.entities.types

    def node_id(node: int) -> str:
        if node < n_p:
            return f"ep_{int(cache.ids[node])}"
        if node >= fact_base:
            return f"fact_{int(graph.facts.ids[node - fact_base])}"
        return node_label(names[node - n_p], types[node - n_p])

    nodes: list[dict[str, Any]] = []
    for node in order:
        if node < n_p:
            nodes.append({"id": node_id(node), "type": "passage"})
        elif node >= fact_base:
            statement = graph.facts.statements[node - fact_base]
            nodes.append({"id": node_id(node), "type": "fact", "label": statement})
        else:
            position = node - n_p
            nodes.append(
                {
                    "id": node_id(node),
                    "type": "entity",
                    "label": names[position],
                    "kind": types[position],
                    "passages": int(graph.degree[position]),
                }
            )

    def edge_kind(low: int, high: int) -> str:  # nodes run passages, entities, facts
        if high < n_p:
            return "next"
        if high >= fact_base:
            return "source" if low < n_p else "mentions"
        return "said" if types[high - n_p] == SPEAKER_TYPE else "mentions"

    edges: list[dict[str, str]] = []
    for node in order:
        for neighbour in indices[indptr[node] : indptr[node + 1]].tolist():
            if neighbour in seen and node < neighbour:
                edges.append(
                    {
                        "source": node_id(node),
                        "target": node_id(neighbour),
                        "type": edge_kind(node, neighbour),
                    }
                )
    return {"around": node_id(start), "nodes": nodes, "edges": edges}


def _start(user_id: str, graph: UserGraph, cache: UserRows, around: str) -> int:
    n_p = graph.passages
    fact_base = n_p + graph.entities.entity_ids.size
    for prefix, kind, ids, first in (
        ("ep_", "passage", cache.ids, 0),
        ("fact_", "fact", graph.facts.ids, fact_base),
    ):
        if around.startswith(prefix) and around[len(prefix) :].isdigit():
            at = int(positions(ids, [int(around[len(prefix) :])])[0])
            if at < 0:
                raise ValueError(f"no {kind} {around!r} in the memory graph of {user_id!r}")
            return first + at
    keys = graph.entities.keys
    if around.startswith("speaker:"):
        position = keys.get(speaker_key(entity_key(around.removeprefix("speaker:"))))
    else:
        key = entity_key(around.removeprefix("entity:"))
        position = keys.get(key)
        if position is None:  # a person known only as a speaker
            position = keys.get(speaker_key(key))
    if position is None:
        raise ValueError(f"no entity {around!r} in the memory graph of {user_id!r}")
    return n_p + position


def graph_footprint(graph: UserGraph) -> dict[str, int]:
    """Bytes a user's graph takes in memory (arrays exactly, strings and the key dictionary
    by ``sys.getsizeof``)."""
    rows = graph.entities
    arrays = (
        graph.adjacency.data.nbytes
        + graph.adjacency.indices.nbytes
        + graph.adjacency.indptr.nbytes
        + graph.degree.nbytes
        + rows.entity_ids.nbytes
        + rows.vectors.nbytes
        + graph.names_matrix.nbytes
        + rows.mention_entity.nbytes
        + rows.mention_episode.nbytes
        + graph.facts.ids.nbytes
        + graph.facts.source_fact.nbytes
        + graph.facts.source_episode.nbytes
    )
    strings = (
        sum(sys.getsizeof(n) for n in rows.names)
        + sum(sys.getsizeof(t) for t in rows.types)
        + sum(sys.getsizeof(statement) for statement in graph.facts.statements)
    )
    keys = (
        sys.getsizeof(rows.keys)
        + sum(sys.getsizeof(k) for k in rows.keys)
        + sys.getsizeof(graph.fact_keys)
        + sum(
            sys.getsizeof(found) + sum(sys.getsizeof(k) for k in found)
            for found in graph.fact_keys.values()
        )
    )
    return {
        "passages": graph.passages,
        "entities": int(rows.entity_ids.size),
        "facts": int(graph.facts.ids.size),
        "edges": int(graph.adjacency.nnz),
        "bytes": arrays + strings + keys,
    }


def node_label(name: str, kind: str) -> str:
    """How a graph node is named to a viewer: ``entity:Caroline``, ``speaker:Caroline``."""
    return f"{'speaker' if kind == SPEAKER_TYPE else 'entity'}:{name}"
