"""The routes the dashboard reads and corrects through: users, card edits and sources,
graph entities, status, and the bundle served at ``/`` (its own origin, no CDN)."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from madeleine.server.dashboard_mount import BUNDLE, mount_dashboard
from tests.server.conftest import A, B

HOME = [
    {"role": "user", "content": "I live in Boston and I work at Acme Robotics."},
    {"role": "user", "content": "My sister Jordan lives in Lisbon."},
]


def _seed(client: TestClient) -> dict[str, str]:
    body = {"user_id": "alex", "messages": HOME, "wait": True}
    assert client.post("/v1/memories", headers=A, json=body).status_code == 200
    facts = client.get("/v1/facts", headers=A, params={"user_id": "alex"}).json()["facts"]
    return {f["key"]: f["id"] for f in facts}


def test_users_are_listed_per_tenant_with_counts(client: TestClient) -> None:
    _seed(client)
    facts = client.get("/v1/facts", headers=A, params={"user_id": "alex"}).json()["facts"]
    users = client.get("/v1/users", headers=A).json()["users"]
    assert users == [{"user_id": "alex", "facts": len(facts), "turns": 2}]
    assert client.get("/v1/users", headers=B).json() == {"users": []}
    bad = client.get("/v1/users", headers=A, params={"limit": 0})
    assert bad.status_code == 400 and "limit" in bad.json()["error"]["message"]
    assert client.get("/v1/users").status_code == 401


def test_a_card_is_edited_into_a_new_version(client: TestClient) -> None:
    home = _seed(client)["location.home"]
    body = {"user_id": "alex", "statement": "The user lives in Denver.", "reason": "moved"}
    edited = client.put(f"/v1/facts/{home}", headers=A, json=body)
    assert edited.status_code == 200, edited.text
    new = edited.json()["fact"]
    assert edited.json()["replaced"] == home and new["supersedes"] == home
    history = client.get(f"/v1/facts/{new['id']}/history", headers=A, params={"user_id": "alex"})
    assert [(c["id"], c["status"]) for c in history.json()["history"]] == [
        (home, "superseded"),
        (new["id"], "current"),
    ]
    again = client.put(f"/v1/facts/{home}", headers=A, json=body)
    assert again.status_code == 409 and again.json()["error"]["code"] == "stale_version"
    assert new["id"] in again.json()["error"]["message"]
    other = client.put(f"/v1/facts/{new['id']}", headers=B, json=body)
    assert other.status_code == 404
    empty = client.put(f"/v1/facts/{new['id']}", headers=A, json={**body, "statement": " "})
    assert empty.status_code == 400 and "empty" in empty.json()["error"]["message"]
    typed = client.put(f"/v1/facts/{new['id']}", headers=A, json={**body, "statement": 5})
    assert typed.status_code == 422
    unknown = client.put(f"/v1/facts/{new['id']}", headers=A, json={**body, "extra": 1})
    assert unknown.status_code == 422


def test_sources_and_entities(client: TestClient) -> None:
    sister = _seed(client)["relationship.sister"]
    sources = client.get(f"/v1/facts/{sister}/sources", headers=A, params={"user_id": "alex"})
    assert [s["content"] for s in sources.json()["sources"]] == [HOME[1]["content"]]
    missing = client.get(f"/v1/facts/{sister}/sources", headers=B, params={"user_id": "alex"})
    assert missing.status_code == 404
    entities = client.get("/v1/entities", headers=A, params={"user_id": "alex"}).json()
    labels = {e["label"] for e in entities["entities"]}
    assert {"Boston", "Lisbon", "Jordan"} <= labels
    view = client.get("/v1/graph", headers=A, params={"user_id": "alex"}).json()
    assert view["around"] == entities["entities"][0]["id"] and view["edges"]


def test_status_reports_backend_queue_and_consistency(client: TestClient) -> None:
    _seed(client)
    status = client.get("/v1/status", headers=A).json()
    assert status["backend"] in ("sqlite", "postgresql")
    assert status["pending_jobs"] == 0 and status["failed_jobs"] == 0
    assert status["integrity"]["consistent"] is True
    assert status["stats"]["events"] == 2 and "path" not in status["stats"]


def test_the_dashboard_is_served_at_the_root_with_a_strict_policy(client: TestClient) -> None:
    page = client.get("/")
    if not (BUNDLE / "index.html").is_file():
        assert page.status_code == 503 and "npm run build" in page.text
        return
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert "http://" not in page.text and "https://" not in page.text  # nothing from a CDN
    assert client.get("/health").json()["status"] == "ok"  # API routes still come first
    script = client.get("/app.js", headers={"Accept-Encoding": "gzip"})
    assert script.headers["content-encoding"] == "gzip"
    assert "default-src 'self'" in script.headers["content-security-policy"]
    assert client.get("/v1/users").status_code == 401


def test_a_missing_bundle_says_how_to_build_it(tmp_path: Path) -> None:
    app = FastAPI()
    mount_dashboard(app, bundle=tmp_path / "nothing")
    page = TestClient(app).get("/")
    assert page.status_code == 503 and "npm ci" in page.text
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "index.html").write_text("<!doctype html><title>t</title>")
    (bundle / "app.js").write_text("console.log(1)")
    app = FastAPI()
    mount_dashboard(app, bundle=bundle)
    served = TestClient(app)
    assert served.get("/").text.startswith("<!doctype html>")
    script = served.get("/app.js")
    assert script.status_code == 200 and script.headers["x-content-type-options"] == "nosniff"
    assert served.get("/missing.js").status_code == 404


def test_the_shipped_bundle_has_every_file_it_loads() -> None:
    """A rebuilt bundle committed without its new chunks would break the page: every file
    the page and its scripts name is in the package, and nothing names another origin."""
    index = (BUNDLE / "index.html").read_text()
    named = set(re.findall(r'(?:src|href)="\./([\w.-]+)"', index))
    assert {"app.js", "app.css"} <= named
    for script in [n for n in named if n.endswith(".js")]:
        named |= set(re.findall(r"chunk-[A-Z0-9]+\.js", (BUNDLE / script).read_text()))
    missing = [name for name in named if not (BUNDLE / name).is_file()]
    assert not missing, f"the bundle names files it does not ship: {missing}"
    for path in BUNDLE.iterdir():
        assert not re.search(r"""(?:src|href)=["']https?://""", path.read_text()), path.name
