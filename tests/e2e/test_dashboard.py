"""The dashboard in a real browser against a real server: each test walks one screen the
way a person would (keyboard and clicks) and reads what the page shows."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.e2e.conftest import KEY
from tests.server.conftest import LiveServer


def sign_in(page: Page, server: LiveServer, path: str) -> None:
    """Open ``path`` with the key handed over in the URL fragment, the way `madeleine demo`
    links do."""
    page.goto(f"{server.url}/#key={KEY}")
    expect(page.get_by_test_id("sign-out")).to_be_visible()
    assert KEY not in page.url, "the key must be stripped from the URL"
    page.goto(f"{server.url}/{path}")


def test_profile_after_key_form(page: Page, server: LiveServer) -> None:
    """The key form (submitted with Enter) leads to the users; picking alex shows the cards
    grouped by category, with their sources one click away."""
    page.goto(server.url + "/")
    expect(page.get_by_test_id("key-form")).to_be_visible()
    page.get_by_test_id("key-input").fill(KEY)
    page.get_by_test_id("key-input").press("Enter")
    expect(page.get_by_test_id("sign-out")).to_be_visible()
    page.locator("[data-testid=user-select], [data-testid=user-input]").first.wait_for()
    picker = page.get_by_test_id("user-select")
    if picker.count():  # the server lists its users
        expect(picker.locator("option", has_text="bea")).to_have_count(1)
        picker.select_option("alex")
    else:
        page.get_by_test_id("user-input").fill("alex")
        page.get_by_test_id("user-input").press("Enter")
    expect(page).to_have_url(re.compile(r"#/users/alex/profile$"))
    work = page.locator("[data-testid=category][data-category=work]")
    expect(work.get_by_test_id("fact-statement").first).to_contain_text("Globex")
    location = page.locator("[data-testid=category][data-category=location]")
    expect(location.get_by_test_id("fact-statement")).to_have_text(["The user moved to Denver."])
    assert page.get_by_test_id("category").count() >= 4
    location.get_by_test_id("history-button").click()
    expect(location.locator("[data-testid=history-entry][data-status=superseded]")).to_contain_text(
        "Boston"
    )
    location.get_by_test_id("sources-button").click()
    expect(location.get_by_test_id("source-message")).to_contain_text("We moved to Denver")


def test_search_explain_and_context(page: Page, server: LiveServer) -> None:
    """A search shows the ranking with each stage's part of the top hit's score, and the
    context an agent would get with its token count."""
    sign_in(page, server, "#/users/alex/search")
    box = page.get_by_test_id("search-input")
    box.fill("where does Alex live now")
    box.press("Enter")
    first = page.get_by_test_id("hit").first
    expect(first.get_by_test_id("explain")).to_be_visible()  # the top hit's is open
    turn = page.locator("[data-testid=hit][data-kind=turn]").first
    if not turn.get_by_test_id("explain").count():
        turn.get_by_test_id("explain-toggle").click()
    explain = turn.get_by_test_id("explain")
    channels = explain.get_by_test_id("channel-row").evaluate_all(
        "rows => rows.map(r => r.dataset.channel)"
    )
    assert set(channels) & {"dense", "bm25", "graph"}, channels
    fusion = explain.locator("[data-testid=stage-row][data-stage=fusion]")
    expect(fusion.get_by_test_id("stage-value")).to_have_text(re.compile(r"^\d+\.\d+$"))
    later = explain.locator("[data-testid=stage-row]:not([data-stage=fusion])")
    assert later.count() >= 1, "no stage after fusion is shown"
    expect(later.first.get_by_test_id("stage-value")).to_have_text(re.compile(r"^[+−×-]?\d"))
    expect(page.get_by_test_id("context-tokens")).to_have_text(re.compile(r"^\d+ / 1000 tokens$"))
    tokens = int(page.get_by_test_id("context-tokens").inner_text().split()[0])
    assert 0 < tokens <= 1000
    expect(page.get_by_test_id("context-text")).to_contain_text("Denver")


def test_edit_card_makes_new_version(page: Page, server: LiveServer) -> None:
    """Editing a card saves a new version; its history shows the old one superseded."""
    sign_in(page, server, "#/users/alex/profile")
    card = page.get_by_test_id("fact-card").filter(has_text="The user is vegetarian.")
    card.get_by_test_id("edit-button").click()
    statement = card.get_by_test_id("edit-statement")
    statement.fill("The user is vegan.")
    statement.press("Enter")
    expect(page.get_by_test_id("notice")).to_contain_text("supersedes")
    edited = page.get_by_test_id("fact-card").filter(has_text="The user is vegan.")
    expect(edited).to_have_count(1)
    gone = page.get_by_test_id("fact-statement").filter(has_text="The user is vegetarian.")
    expect(gone).to_have_count(0)
    history = edited.get_by_test_id("history")
    expect(history.locator("[data-testid=history-entry][data-status=superseded]")).to_contain_text(
        "vegetarian"
    )
    expect(history.locator("[data-testid=history-entry][data-status=current]")).to_contain_text(
        "vegan"
    )


def test_graph_expands_on_click(page: Page, server: LiveServer) -> None:
    """Clicking a node of the graph canvas fetches its neighbours: the node count grows."""
    sign_in(page, server, "#/users/alex/graph?depth=1")
    count = page.get_by_test_id("graph-node-count")
    expect(count).to_have_attribute("data-nodes", re.compile(r"^[1-9]"))
    before = int(count.get_attribute("data-nodes") or 0)
    target = page.evaluate(
        """() => {
            const cy = window.__madeleineGraph;
            const node = cy.nodes('[kind = "passage"]').filter(n => !n.hasClass('expanded'))[0]
                || cy.nodes().filter(n => !n.hasClass('expanded'))[0];
            const at = node.renderedPosition();
            return {id: node.id(), x: at.x, y: at.y};
        }"""
    )
    box = page.get_by_test_id("graph-canvas").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + target["x"], box["y"] + target["y"])
    expect(page.get_by_test_id("graph-selected")).to_contain_text(target["id"])
    expect(count).not_to_have_attribute("data-nodes", str(before))
    assert int(count.get_attribute("data-nodes") or 0) > before


def test_timeline_marks_supersessions(page: Page, server: LiveServer) -> None:
    """The timeline shows the sessions in order and marks the facts that were superseded."""
    sign_in(page, server, "#/users/alex/timeline")
    sessions = page.get_by_test_id("timeline-session")
    expect(sessions.first).to_be_visible()
    found = sessions.evaluate_all("groups => groups.map(g => g.dataset.session)")
    assert {"2024-03-04-intro", "2024-09-20-career", "2025-01-15-move"} <= set(found), found
    boston = page.locator("[data-testid=timeline-item][data-status=superseded]", has_text="Boston")
    expect(boston.get_by_test_id("supersession")).to_contain_text("superseded by fact_")


def test_refused_key_and_unreachable_server(page: Page, server: LiveServer) -> None:
    """A wrong key is refused with a clear message and asked again; a server that cannot be
    reached says so."""
    page.goto(server.url + "/")
    page.get_by_test_id("key-input").fill("not-a-key")
    page.get_by_test_id("key-submit").click()
    expect(page.get_by_test_id("key-error")).to_contain_text("refused")
    page.goto(f"{server.url}/#key=revoked-key")  # a stored key the server no longer knows
    expect(page.get_by_test_id("key-reason")).to_contain_text("refused")
    page.route("**/v1/**", lambda route: route.abort())
    page.get_by_test_id("key-input").fill(KEY)
    page.get_by_test_id("key-submit").click()
    expect(page.get_by_test_id("key-error")).to_contain_text("Cannot reach the server")


def test_phone_viewport(page: Page, server: LiveServer) -> None:
    """At 390×844 the tabs wrap and nothing makes the page scroll sideways; signing out
    forgets the key."""
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, server, "#/users/alex/profile")
    expect(page.get_by_test_id("fact-card").first).to_be_visible()
    for tab in ("profile", "search", "graph", "timeline", "kb", "health"):
        expect(page.get_by_test_id(f"tab-{tab}")).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.get_by_test_id("tab-health").click()
    expect(page.get_by_test_id("routing-log")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.get_by_test_id("sign-out").click()
    expect(page.get_by_test_id("key-form")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0, "signing out must forget the key"


def test_knowledge_base_search_respects_the_principal(page: Page, server: LiveServer) -> None:
    """Documents show their versions and ACL; a search as a principal outside the finance
    group does not see the finance-only document, one inside does. Health shows the alert."""
    sign_in(page, server, "#/users/alex/kb")
    rows = page.get_by_test_id("document-row")
    expect(rows).to_have_count(3)
    expect(rows.filter(has_text="Approval limits")).to_contain_text("group:finance")
    query = "who approves trips over 3,000 EUR?"
    page.get_by_test_id("kb-query").fill(query)
    page.get_by_test_id("kb-query").press("Enter")
    hits = page.get_by_test_id("kb-hit")
    expect(hits.first).to_be_visible()
    expect(hits.filter(has_text="Approval limits")).to_have_count(0)
    page.locator("#kb-groups").fill("finance")
    page.get_by_test_id("kb-query").press("Enter")
    expect(hits.filter(has_text="Approval limits").first).to_be_visible()
    page.get_by_test_id("tab-health").click()
    expect(page.get_by_test_id("alerts")).to_contain_text("passport expires on 2024-12-01")
    expect(page.get_by_test_id("routing-log")).to_contain_text("superseded")
