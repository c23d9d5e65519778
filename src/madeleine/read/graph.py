"""The graph channel: Personalized PageRank from the query's entities, no LLM.

Nodes are one user's passages (episodes, aligned with the dense rows), entities, named
speakers and current facts; edges are mentions (entity–passage), "said" (speaker–passage),
a fact's sources (fact–passage) and the entities its statement names (fact–entity), and
consecutive turns of a session (passage–passage, weight 0.5). Seeds come from the user's
dictionary (every 1–3-word n-gram of the query, by guarded key, for entities and speakers)
and, when the query names too few, from the similarity of the query's embedding to entity
names, from ``graph_seed_threshold`` down step by step (progressive widening). Entities that
a large share of the passages mention are neither seeds nor expanded; a speaker who said
such a share is not walked through but lifts what they said by their seed's first step.

PPR runs on the seeds' neighbourhood only (at most ``_MAX_DEPTH`` hops and ``_MAX_NODES``
nodes, bounded iterations), so its cost does not grow with the user's history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse

from madeleine.config import Settings
from madeleine.graph.entities import entity_key, ngram_keys, speaker_key
from madeleine.read.dense import UserRows
from madeleine.read.graph_view import graph_footprint, graph_view, node_label, top_entities
from madeleine.read.lru import UserLRU
from madeleine.sorted_ids import positions
from madeleine.store.ports import FactRepository, GraphRepository
from madeleine.store.records import FactLinks, GraphRows

_SESSION_EDGE = 0.5  # a turn's link to the next turn, against 1.0 for a mention
_MAX_DEPTH = 3  # entity → passage → entity/passage → passage
_MAX_NODES = 4000
_MAX_EXPANDED_DEGREE = 1000  # an entity in more passages than this is a hub at any size
_MAX_ITERATIONS = 20
_TOLERANCE = 1e-5
_WIDENING_STEP = 0.1
_WIDENING_FLOOR = 0.3
_CACHED_USERS = 64
_PASSAGE_SEED_SHARE = 0.5  # a dense hit as a seed, against 1.0 for an entity named in the query


Seed = tuple[float, str, float]  # personalization weight, how it was found, strength
QueryVector = Callable[[], npt.NDArray[np.float32] | None]  # the query embedding, on demand


@dataclass(slots=True)
class UserGraph:
    generation: tuple[int, int]
    entities: GraphRows
    passages: int
    degree: npt.NDArray[np.int64]  # passages that mention each entity
    adjacency: sparse.csr_matrix
    names_matrix: npt.NDArray[np.float32]  # entity name vectors, float32 for the query product
    last_episode: int  # the newest episode these rows cover
    facts: FactLinks  # current facts: nodes after the passages and the entities
    fact_generation: int
    fact_keys: dict[int, frozenset[str]]  # fact id -> its statement's n-gram keys


@dataclass(slots=True)
class GraphRecall:
    rows: npt.NDArray[np.int64]
    raw: npt.NDArray[np.float32]
    calibrated: npt.NDArray[np.float32]
    seeds: list[dict[str, Any]] = field(default_factory=list)
    parents: dict[int, int] = field(default_factory=dict)  # node -> the node it was reached from
    names: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    # speakers too common to walk through: (node, the passage rows they said)
    hub_links: list[tuple[int, npt.NDArray[np.int64]]] = field(default_factory=list)
    passages: int = 0
    episode_ids: npt.NDArray[np.int64] | None = None
    facts: dict[int, float] = field(default_factory=dict)  # fact id -> calibrated score
    fact_ids: npt.NDArray[np.int64] | None = None  # fact node n_p + n_e + i is fact_ids[i]

    def path(self, row: int) -> list[str] | None:
        """Seed … this passage, by first discovery; None if the walk did not reach it.
        Built on demand: only the hits that are returned need one."""
        if self.episode_ids is None or not bool(np.any(self.rows == row)):
            return None
        parents = self.parents
        if row not in parents:
            for node, said in self.hub_links:
                if positions(said, [row])[0] >= 0:
                    parents = {row: node}
                    break
        return self._walk_back(row, parents)

    def fact_path(self, fact_id: int) -> list[str] | None:
        """Seed … this fact; None if the walk did not reach it."""
        if self.fact_ids is None or fact_id not in self.facts:
            return None
        position = int(np.searchsorted(self.fact_ids, fact_id))
        return self._walk_back(self.passages + len(self.names) + position, self.parents)

    def _walk_back(self, node: int, parents: dict[int, int]) -> list[str]:
        steps: list[str] = []
        current: int | None = node
        while current is not None and len(steps) <= _MAX_DEPTH + 1:
            steps.append(self._label(current))
            current = parents.get(current)
        return list(reversed(steps))

    def _label(self, node: int) -> str:
        assert self.episode_ids is not None
        if node < self.passages:
            return f"ep_{int(self.episode_ids[node])}"
        position = node - self.passages
        if position < len(self.names):
            return node_label(self.names[position], self.types[position])
        assert self.fact_ids is not None
        return f"fact_{int(self.fact_ids[position - len(self.names)])}"


class GraphIndex:
    def __init__(
        self,
        graph: GraphRepository,
        settings: Settings,
        similarity_range: tuple[float, float],
        facts: FactRepository | None = None,
    ) -> None:
        self._graph = graph
        self._facts = facts
        self._settings = settings
        self._low, self._high = similarity_range
        self._cache: UserLRU[UserGraph] = UserLRU(_CACHED_USERS)

    def speakers_among(
        self, user_id: str, cache: UserRows, dim: int, names: tuple[str, ...]
    ) -> set[str]:
        """Which of ``names`` speak in the user's conversations (a two-person transcript
        stored under one user: their names tell the two apart)."""
        if not names:
            return set()
        keys = self.user_graph(user_id, cache, dim).entities.keys
        return {name for name in names if speaker_key(entity_key(name)) in keys}

    def user_graph(self, user_id: str, cache: UserRows, dim: int) -> UserGraph:
        """The user's graph for these passage rows and the user's current facts: cached per
        generation of both; when only additions happened since (no delete), only the new
        rows are read, and when only the facts changed, the passage part is reused."""
        cached = self._cache.get(user_id)
        fact_generation = 0 if self._facts is None else self._facts.generation(user_id)
        if cached is not None and cached.generation == cache.generation:
            if cached.fact_generation == fact_generation:
                return cached
            entities, matrix = cached.entities, cached.names_matrix
        elif (
            cached is not None
            and cached.generation[1] == cache.generation[1]
            and cached.generation[0] < cache.generation[0]
        ):  # added only
            old = cached.entities
            delta = self._graph.rows(
                user_id, dim, known_ids=old.entity_ids, episode_after=cached.last_episode
            )
            entities = GraphRows(
                entity_ids=np.concatenate([old.entity_ids, delta.entity_ids]),
                names=old.names + delta.names,
                types=old.types + delta.types,
                keys={**old.keys, **delta.keys},
                vectors=delta.vectors,
                mention_entity=np.concatenate([old.mention_entity, delta.mention_entity]),
                mention_episode=np.concatenate([old.mention_episode, delta.mention_episode]),
            )
            matrix = np.vstack([cached.names_matrix, delta.vectors.astype(np.float32)])
        else:
            entities = self._graph.rows(user_id, dim)
            matrix = entities.vectors.astype(np.float32)
        facts = FactLinks.empty() if self._facts is None else self._graph.fact_links(user_id)
        built = _build(
            cache,
            entities,
            matrix,
            facts,
            fact_generation,
            {} if cached is None else cached.fact_keys,
        )
        self._cache.put(user_id, built)
        return built

    def footprint(self, user_id: str) -> dict[str, int]:
        """The cached graph's size in memory; empty when it is not cached."""
        graph = self._cache.get(user_id)
        return {} if graph is None else graph_footprint(graph)

    def view(
        self, user_id: str, cache: UserRows, dim: int, around: str | None, depth: int, limit: int
    ) -> dict[str, Any]:
        return graph_view(
            self.user_graph(user_id, cache, dim), user_id, cache, around, depth, limit
        )

    def entities(self, user_id: str, cache: UserRows, dim: int, limit: int) -> list[dict[str, Any]]:
        return top_entities(self.user_graph(user_id, cache, dim), limit)

    def needs_vector(
        self, user_id: str, cache: UserRows, dim: int, query: str, query_entities: list[str]
    ) -> bool:
        """Whether a walk for this query would read the query's embedding: only when its
        names find fewer than ``graph.min_seeds`` entities, and similarity has to widen."""
        graph = self.user_graph(user_id, cache, dim)
        if graph.entities.entity_ids.size == 0:
            return False
        strength, _, named_hubs = _named(graph, self._hubs(graph), query, query_entities)
        return len(strength) + len(named_hubs) < self._settings.graph.min_seeds

    def _hubs(self, graph: UserGraph) -> npt.NDArray[np.bool_]:
        """Entities mentioned by so many passages that they are neither seeds nor expanded."""
        return graph.degree > min(
            max(3, int(graph.passages * self._settings.stages.entity_max_share)),
            _MAX_EXPANDED_DEGREE,
        )

    def recall(
        self,
        user_id: str,
        cache: UserRows,
        query: str,
        query_entities: list[str],
        vector: QueryVector,
        dim: int,
        passage_seeds: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None = None,
        excluded: tuple[str, ...] = (),
    ) -> GraphRecall:
        """``passage_seeds``: (rows, calibrated scores) of the best dense hits, which also
        seed the walk (HippoRAG 2); only the mass the graph moves counts for them.
        ``excluded``: names that seed nothing (the user's own: ``read/names.py``).
        ``vector`` is called only when the query names too few entities (``needs_vector``),
        so a walk seeded by names alone can run before the query is embedded."""
        graph = self.user_graph(user_id, cache, dim)
        empty = GraphRecall(np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(0, np.float32))
        if graph.entities.entity_ids.size == 0:
            return empty
        hub = self._hubs(graph)
        seeds, hub_seeds = self._seeds(graph, hub, query, query_entities, vector)
        if excluded:
            keys = graph.entities.keys
            unwanted = {
                keys[k]
                for name in excluded
                for k in (entity_key(name), speaker_key(entity_key(name)))
                if k in keys
            }
            seeds = {s: seed for s, seed in seeds.items() if s not in unwanted}
            hub_seeds = {s: seed for s, seed in hub_seeds.items() if s not in unwanted}
        n_p = graph.passages
        start_list = [n_p + s for s in seeds]
        weight_list = [w for w, _, _ in seeds.values()]
        strength_list = [m for _, _, m in seeds.values()]
        seeded_passages: list[dict[str, Any]] = []
        if passage_seeds is not None:
            rows_in, scores_in = passage_seeds
            for row, score in zip(rows_in.tolist(), scores_in.tolist(), strict=True):
                if score > 0:
                    start_list.append(int(row))
                    weight_list.append(_PASSAGE_SEED_SHARE * float(score))
                    strength_list.append(float(score))
                    seeded_passages.append(
                        {
                            "passage": f"ep_{int(cache.ids[row])}",
                            "how": "dense",
                            "weight": round(_PASSAGE_SEED_SHARE * float(score), 4),
                        }
                    )
        if not start_list and not hub_seeds:
            return empty
        damping = self._settings.graph.damping
        weights = np.asarray(weight_list, dtype=np.float64)
        total_weight = float(weights.sum()) + sum(w for w, _, _ in hub_seeds.values())
        # how sure the seeding is: 1.0 for names found in the query, less for seeds only
        # similar to it; the channel's scores are scaled by it, so weak seeds lift little
        sure = np.asarray(strength_list, dtype=np.float64) @ weights + sum(
            w * m for w, _, m in hub_seeds.values()
        )
        confidence = float(sure / total_weight)
        parents: dict[int, int] = {}
        score_of = np.zeros(n_p, dtype=np.float64)
        fact_base = n_p + graph.entities.entity_ids.size
        fact_score = np.zeros(graph.facts.ids.size, dtype=np.float64)
        if start_list:
            start = np.asarray(start_list, dtype=np.int64)
            expandable = np.ones(graph.adjacency.shape[0], dtype=bool)
            expandable[n_p:fact_base] = ~hub
            nodes, parents = _neighbourhood(graph.adjacency, start, expandable)
            scores = _ppr(graph.adjacency, nodes, start, weights, damping)
            # a seed passage's own restart mass is the dense score again: count what the
            # walk adds
            scores[: start.size] -= (1.0 - damping) * weights / weights.sum()
            np.maximum(scores, 0.0, out=scores)
            share = weights.sum() / total_weight
            passage = nodes < n_p
            score_of[nodes[passage]] = scores[passage] * share
            fact = nodes >= fact_base
            fact_score[nodes[fact] - fact_base] = scores[fact] * share
        # a speaker who said a large share of the turns is not walked through (every walk
        # would end up there): the first step, spread evenly over what they said, is the
        # share of that seed — a lift for their own words over what others said about them
        hub_links: list[tuple[int, npt.NDArray[np.int64]]] = []
        indptr, indices = graph.adjacency.indptr, graph.adjacency.indices
        for position, (weight, _, _) in hub_seeds.items():
            node = n_p + position
            said = indices[indptr[node] : indptr[node + 1]]
            said = said[said < n_p].astype(np.int64)
            if said.size:
                score_of[said] += damping * weight / total_weight / said.size
                hub_links.append((node, said))
        rows = np.flatnonzero(score_of > 0)
        raw = score_of[rows]
        reached = np.flatnonzero(fact_score > 0)
        top = max(float(raw.max(initial=0.0)), float(fact_score.max(initial=0.0)))
        if top <= 0:
            return empty
        order = np.argsort(-raw, kind="stable")
        rows, raw = rows[order], raw[order]
        calibrated = raw / top * confidence
        names = graph.entities.names
        return GraphRecall(
            rows.astype(np.int64),
            raw.astype(np.float32),
            calibrated.astype(np.float32),
            seeds=[
                {"entity": names[s], "how": how, "weight": round(w, 4)}
                for s, (w, how, _) in (seeds | hub_seeds).items()
            ]
            + seeded_passages,
            parents=parents,
            names=names,
            types=graph.entities.types,
            hub_links=hub_links,
            passages=n_p,
            episode_ids=cache.ids,
            facts={
                int(graph.facts.ids[i]): float(fact_score[i] / top * confidence)
                for i in reached.tolist()
            },
            fact_ids=graph.facts.ids,
        )

    def _seeds(
        self,
        graph: UserGraph,
        hub: npt.NDArray[np.bool_],
        query: str,
        query_entities: list[str],
        vector: QueryVector,
    ) -> tuple[dict[int, Seed], dict[int, Seed]]:
        """Seeds and hub seeds (common entities the query names), each entity position ->
        (personalization weight: strength × how specific it is, how it was found, strength)."""
        strength, how, named_hubs = _named(graph, hub, query, query_entities)
        wanted = self._settings.graph.min_seeds
        query_vector = vector() if len(strength) + len(named_hubs) < wanted else None
        if query_vector is not None:
            sims = graph.names_matrix @ query_vector
            calibrated = np.clip((sims - self._low) / (self._high - self._low), 0.0, 1.0)
            calibrated[hub] = 0.0
            calibrated[list(strength)] = 0.0
            threshold = self._settings.graph.seed_threshold
            while True:
                above = np.flatnonzero(calibrated >= threshold)
                if (
                    len(strength) + len(named_hubs) + above.size >= wanted
                    or threshold <= _WIDENING_FLOOR
                ):
                    break
                threshold = round(threshold - _WIDENING_STEP, 6)
            best = above[np.argsort(-calibrated[above], kind="stable")]
            for position in best[: max(0, self._settings.graph.max_seeds - len(strength))]:
                # a name merely similar to the query is a weaker lead than one it contains
                strength[int(position)] = float(calibrated[position]) ** 2
                how[int(position)] = f"similar ≥ {threshold:.1f}"
        n_p = max(graph.passages, 1)

        def weighted(found: dict[int, float], found_how: dict[int, str]) -> dict[int, Seed]:
            seeds: dict[int, Seed] = {}
            for position, value in found.items():
                df = max(int(graph.degree[position]), 1)
                specificity = float(np.log((n_p + 1) / df) / np.log(n_p + 1))
                if specificity > 0 and value > 0:
                    seeds[position] = (value * specificity, found_how[position], value)
            return seeds

        hubs = weighted(dict.fromkeys(named_hubs, 1.0), dict.fromkeys(named_hubs, "speaker"))
        return weighted(strength, how), hubs


def _named(
    graph: UserGraph, hub: npt.NDArray[np.bool_], query: str, query_entities: list[str]
) -> tuple[dict[int, float], dict[int, str], set[int]]:
    """The entities and speakers the query names, by dictionary key: (strength of each
    seed position, how it was found, the named speakers too common to walk through)."""
    keys = ngram_keys(query) | {entity_key(e) for e in query_entities}
    known = graph.entities.keys
    strength: dict[int, float] = {}
    how: dict[int, str] = {}
    named_hubs: set[int] = set()
    for key in keys:
        position = known.get(key)
        if position is not None and not hub[position]:
            strength[position] = 1.0
            how[position] = "dictionary"
        # the person who said a turn is a node of its own: a question naming them
        # reaches what they said, not what others said to them
        speaker = known.get(speaker_key(key))
        if speaker is not None and hub[speaker]:
            named_hubs.add(speaker)
        elif speaker is not None:
            strength[speaker] = 1.0
            how[speaker] = "speaker"
    return strength, how, named_hubs


def _build(
    cache: UserRows,
    entities: GraphRows,
    names_matrix: npt.NDArray[np.float32],
    facts: FactLinks,
    fact_generation: int,
    fact_keys: dict[int, frozenset[str]],
) -> UserGraph:
    """Nodes: passages (the dense rows), then entities, then current facts. Edges: mentions,
    consecutive turns (``_SESSION_EDGE``), a fact to the turns it came from and to the
    entities its statement names."""
    n_p, n_e, n_f = cache.ids.size, entities.entity_ids.size, facts.ids.size
    rows = cache.rows_of(entities.mention_episode)
    known = rows >= 0
    # mentions of episodes these rows do not have yet are left for the next refresh
    last_episode = int(cache.ids[-1]) if n_p else 0
    kept = entities.mention_episode <= last_episode
    entities = replace(
        entities,
        mention_entity=entities.mention_entity[kept],
        mention_episode=entities.mention_episode[kept],
        # the float16 copy is not needed once the query-side matrix exists
        vectors=np.zeros((0, names_matrix.shape[1]), dtype=np.float16),
    )
    known = known[kept]
    rows = rows[kept]
    passage, entity = rows[known], entities.mention_entity[known] + n_p
    degree = np.bincount(entities.mention_entity[known], minlength=n_e).astype(np.int64)
    linked = np.flatnonzero(cache.next >= 0)
    following = cache.next[linked]
    source_rows = cache.rows_of(facts.source_episode)
    drawn = (source_rows >= 0) & (facts.source_episode <= last_episode)
    fact_node = n_p + n_e + facts.source_fact[drawn]
    fact_passage = source_rows[drawn]
    named_fact, named_entity = [], []
    # a statement never changes (a new version is a new fact): its keys are read once
    keys_of = {}
    for position, (fact_id, statement) in enumerate(
        zip(facts.ids.tolist(), facts.statements, strict=True)
    ):
        keys = fact_keys.get(fact_id)
        if keys is None:
            keys = frozenset(ngram_keys(statement))
        keys_of[fact_id] = keys
        for key in keys:
            found = entities.keys.get(key)
            if found is not None:
                named_fact.append(n_p + n_e + position)
                named_entity.append(n_p + found)
    fact_named = np.asarray(named_fact, dtype=np.int64)
    entity_named = np.asarray(named_entity, dtype=np.int64)
    sources = np.concatenate(
        [passage, entity, linked, following, fact_node, fact_passage, fact_named, entity_named]
    )
    targets = np.concatenate(
        [entity, passage, following, linked, fact_passage, fact_node, entity_named, fact_named]
    )
    weights = np.concatenate(
        [
            np.ones(2 * passage.size, dtype=np.float32),
            np.full(2 * linked.size, _SESSION_EDGE, dtype=np.float32),
            np.ones(2 * (fact_node.size + fact_named.size), dtype=np.float32),
        ]
    )
    size = n_p + n_e + n_f
    adjacency = sparse.csr_matrix((weights, (sources, targets)), shape=(size, size))
    adjacency.sum_duplicates()
    return UserGraph(
        cache.generation,
        entities,
        n_p,
        degree,
        adjacency,
        names_matrix,
        last_episode,
        facts,
        fact_generation,
        keys_of,
    )


def _neighbourhood(
    adjacency: sparse.csr_matrix, start: npt.NDArray[np.int64], expandable: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64], dict[int, int]]:
    """Breadth-first from the seeds, at most ``_MAX_DEPTH`` hops and ``_MAX_NODES`` nodes;
    ``parents`` remembers how each node was first reached (for ``explain``). Vectorized:
    a hop is one CSR row slice, never a Python loop over neighbours."""
    seen = np.zeros(adjacency.shape[0], dtype=bool)
    seen[start] = True
    layers = [start]
    reached: list[npt.NDArray[np.int64]] = []
    via: list[npt.NDArray[np.int64]] = []
    frontier, total = start, int(start.size)
    for _ in range(_MAX_DEPTH):
        frontier = frontier[expandable[frontier]]
        if frontier.size == 0 or total >= _MAX_NODES:
            break
        rows = adjacency[frontier]
        neighbours = rows.indices.astype(np.int64)
        origin = np.repeat(frontier, np.diff(rows.indptr))
        fresh = ~seen[neighbours]
        neighbours, origin = neighbours[fresh], origin[fresh]
        if neighbours.size == 0:
            break
        _, first = np.unique(neighbours, return_index=True)
        first = np.sort(first)[: _MAX_NODES - total]  # first discovery wins, in order
        grown, parents_of = neighbours[first], origin[first]
        seen[grown] = True
        layers.append(grown)
        reached.append(grown)
        via.append(parents_of)
        total += int(grown.size)
        frontier = grown
    parents = (
        dict(zip(np.concatenate(reached).tolist(), np.concatenate(via).tolist(), strict=True))
        if reached
        else {}
    )
    return np.concatenate(layers), parents


def _ppr(
    adjacency: sparse.csr_matrix,
    nodes: npt.NDArray[np.int64],
    start: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64],
    damping: float,
) -> npt.NDArray[np.float64]:
    """r = (1 − d)·v + d·Ã·r on the neighbourhood, Ã column-normalized; bounded iterations."""
    transition = adjacency[nodes][:, nodes].astype(np.float64)
    # column-normalize in place: each entry divided by the sum of its column
    column = np.bincount(transition.indices, weights=transition.data, minlength=nodes.size)
    column[column == 0] = 1.0
    transition.data /= column[transition.indices]
    personal = np.zeros(nodes.size, dtype=np.float64)
    personal[: start.size] = weights / weights.sum()  # seeds lead ``nodes``
    restart = (1.0 - damping) * personal
    rank = personal.copy()
    for _ in range(_MAX_ITERATIONS):
        following = restart + damping * (transition @ rank)
        done = np.abs(following - rank).sum() < _TOLERANCE
        rank = following
        if done:
            break
    return rank
