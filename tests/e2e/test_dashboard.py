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
    expect(location.get_by_test_id("source-message")).to_contain_text(re.compile(r":\d\d UTC"))
    # the filter says how many cards match, and when none does
    cards = page.get_by_test_id("fact-card").count()
    page.get_by_test_id("profile-filter").fill("aisle")
    expect(page.get_by_test_id("profile-count")).to_have_text(
        f"1 of {cards} current cards match “aisle”."
    )
    page.get_by_test_id("profile-filter").fill("xyzzy")
    expect(page.get_by_test_id("no-match")).to_have_text("No cards match “xyzzy”.")
    # a user the list does not have: "Other user…" leads to the by-id box
    picker.select_option(label="Other user (by id)…")
    expect(page.get_by_test_id("open-user")).to_be_focused()
    page.get_by_test_id("open-user").fill("nobody")
    page.get_by_test_id("open-user").press("Enter")
    nothing = page.get_by_test_id("no-memories")
    expect(nothing).to_have_text("No memories for user nobody yet.")
    for tab in ("timeline", "graph", "search"):
        page.get_by_test_id(f"tab-{tab}").click()
        expect(nothing).to_contain_text("No memories for user nobody yet")
    page.get_by_test_id("brand").click()  # back to the users list
    expect(page.get_by_test_id("user-row")).to_have_count(2)


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
    expect(page.get_by_test_id("context-summary")).not_to_contain_text(re.compile(r"\b1 \w+s\b"))
    # the as-of time is read as UTC, whatever the browser's zone (America/Denver here)
    page.get_by_test_id("as-of").fill("2030-01-01T00:00")
    with page.expect_request("**/v1/search") as sent:
        box.press("Enter")
    assert (sent.value.post_data_json or {})["as_of"] == "2030-01-01T00:00:00.000Z"


def test_edit_card_makes_new_version(page: Page, server: LiveServer) -> None:
    """Editing a card saves a new version; its history shows the old one superseded."""
    sign_in(page, server, "#/users/alex/profile")
    seat = page.get_by_test_id("fact-card").filter(has_text="aisle seats")
    seat.get_by_test_id("edit-button").click()
    box = seat.get_by_test_id("edit-statement")
    expect(box).to_be_focused()
    expect(seat.get_by_test_id("edit-slot")).to_contain_text("preference.seat")
    expect(seat.get_by_test_id("edit-save")).to_be_disabled()  # unchanged
    box.fill("  ")
    expect(seat.get_by_test_id("edit-save")).to_be_disabled()  # empty
    refusal = {"error": {"code": "bad_request", "message": "the statement is unchanged"}}
    page.route(
        "**/v1/facts/*",
        lambda route: (
            route.fulfill(status=400, json=refusal)
            if route.request.method == "PUT"
            else route.continue_()
        ),
    )
    box.fill("The user prefers window seats.")
    box.press("Enter")
    expect(seat.get_by_test_id("edit-error")).to_contain_text("the statement is unchanged")
    page.unroute("**/v1/facts/*")
    box.press("Escape")
    expect(seat.get_by_test_id("edit-form")).to_have_count(0)
    expect(seat.get_by_test_id("edit-button")).to_be_focused()
    card = page.get_by_test_id("fact-card").filter(has_text="The user is vegetarian.")
    card.get_by_test_id("edit-button").click()
    statement = card.get_by_test_id("edit-statement")
    # the form focuses the box and puts the caret at the end once mounted: filling before
    # that lands the text after the old statement (seen on a loaded machine)
    expect(statement).to_be_focused()
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
    # deleting a card erases its message, and the cards drawn only from it: the panel says so
    peanuts = page.get_by_test_id("fact-card").filter(has_text="allergic to peanuts")
    peanuts.get_by_test_id("delete-button").click()
    confirm = peanuts.get_by_test_id("delete-confirm")
    expect(confirm).to_contain_text("ev_3")
    expect(confirm).to_contain_text("Archive instead")
    expect(confirm.get_by_test_id("delete-also")).to_contain_text("The user is vegan.")
    expect(confirm.get_by_test_id("delete-also")).to_contain_text("data engineer")
    expect(confirm.get_by_test_id("cancel-delete")).to_be_focused()
    page.keyboard.press("Escape")
    expect(confirm).to_have_count(0)
    expect(peanuts.get_by_test_id("delete-button")).to_be_focused()
    peanuts.get_by_test_id("delete-button").click()
    peanuts.get_by_test_id("confirm-delete").click()
    expect(page.get_by_test_id("notice")).to_contain_text("Deleted 3 cards")
    for erased in ("allergic to peanuts", "The user is vegan.", "data engineer"):
        expect(page.get_by_test_id("fact-card").filter(has_text=erased)).to_have_count(0)


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
    expect(page.get_by_test_id("graph-status")).to_contain_text("added around")
    # a node whose neighbours are all shown already: expanding it says "nothing new"
    settled = page.evaluate(
        """async () => {
            const cy = window.__madeleineGraph;
            const headers = {Authorization: 'Bearer ' + sessionStorage.getItem('madeleine.key')};
            for (const node of cy.nodes().filter(n => !n.hasClass('expanded')).toArray()) {
                const url = '/v1/graph?user_id=alex&depth=1&limit=60&around='
                    + encodeURIComponent(node.id());
                const graph = await (await fetch(url, {headers})).json();
                if (graph.nodes.every(n => !cy.getElementById(n.id).empty())) return node.id();
            }
            return null;
        }"""
    )
    assert settled, "every node of the graph has neighbours not shown yet"
    page.evaluate("id => { window.__madeleineGraph.getElementById(id).emit('tap'); }", settled)
    expect(page.get_by_test_id("graph-status")).to_contain_text("Nothing new around")
    expect(page.get_by_test_id("graph-selected")).to_contain_text(settled)
    expect(page.get_by_test_id("graph-selected")).to_be_in_viewport()


def test_timeline_marks_supersessions(page: Page, server: LiveServer) -> None:
    """The timeline shows the sessions in order and marks the facts that were superseded."""
    sign_in(page, server, "#/users/alex/timeline")
    sessions = page.get_by_test_id("timeline-session")
    expect(sessions.first).to_be_visible()
    found = sessions.evaluate_all("groups => groups.map(g => g.dataset.session)")
    assert {"2024-03-04-intro", "2024-09-20-career", "2025-01-15-move"} <= set(found), found
    boston = page.locator("[data-testid=timeline-item][data-status=superseded]", has_text="Boston")
    expect(boston.get_by_test_id("supersession")).to_contain_text("superseded by fact_")
    expect(boston).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"))
    # the server goes away: the header says so at once, Retry loads the view when it is back
    status = page.get_by_test_id("server-status")
    expect(status).to_have_attribute("data-state", "up")
    page.route("**/v1/**", lambda route: route.abort())
    page.get_by_test_id("tab-profile").click()
    error = page.get_by_test_id("error").first
    expect(error).to_contain_text("Cannot reach the server")
    expect(error.locator("code")).to_have_text("madeleine serve")
    expect(status).to_have_attribute("data-state", "offline")
    page.unroute("**/v1/**")
    error.get_by_test_id("retry").click()
    expect(page.get_by_test_id("fact-card").first).to_be_visible()
    expect(status).to_have_attribute("data-state", "up")


def test_refused_key_and_unreachable_server(page: Page, server: LiveServer) -> None:
    """A wrong key is refused with a clear message and asked again; a server that cannot be
    reached says so."""
    page.goto(server.url + "/")
    page.get_by_test_id("key-input").fill("not-a-key")
    page.get_by_test_id("key-submit").click()
    expect(page.get_by_test_id("key-error")).to_contain_text("refused")
    expect(page.get_by_text("refused")).to_have_count(1)  # said once
    page.goto("about:blank")
    page.goto(f"{server.url}/#key=revoked-key")  # a stored key the server no longer knows
    expect(page.get_by_test_id("key-reason")).to_contain_text("refused")
    expect(page.get_by_text("refused")).to_have_count(1)
    page.route("**/v1/**", lambda route: route.abort())
    page.get_by_test_id("key-input").fill(KEY)
    page.get_by_test_id("key-submit").click()
    expect(page.get_by_test_id("key-error")).to_contain_text("Cannot reach the server")
    page.unroute("**/v1/**")
    page.get_by_test_id("key-error").get_by_test_id("retry").click()
    expect(page.get_by_test_id("sign-out")).to_be_visible()


def test_phone_viewport(page: Page, server: LiveServer) -> None:
    """At 390×844 the tabs wrap and nothing makes the page scroll sideways; signing out
    forgets the key."""
    page.set_viewport_size({"width": 390, "height": 844})
    # a tenant with one user: the first load opens it, the brand link still shows the list
    only = {"users": [{"user_id": "alex", "facts": 13, "turns": 23}]}
    page.route("**/v1/users?*", lambda route: route.fulfill(json=only))
    page.goto(f"{server.url}/#key={KEY}")
    expect(page).to_have_url(re.compile(r"#/users/alex/profile$"))
    expect(page.get_by_test_id("fact-card").first).to_be_visible()
    page.get_by_test_id("brand").click()
    expect(page.get_by_test_id("user-row")).to_have_count(1)
    expect(page.get_by_test_id("open-user")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.get_by_test_id("user-row").get_by_role("link", name="alex").click()
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
    rows.filter(has_text="Booking rules").get_by_role("button").first.click()
    versions = page.get_by_test_id("doc-version")
    expect(versions).to_have_count(2)
    expect(versions.first).to_contain_text("2025-02-01")
    expect(versions.first).to_contain_text("replaced by v2")
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


def test_a_read_only_key_sees_only_what_it_may(page: Page, server: LiveServer) -> None:
    """A key with the read scope only: no user listing, no edit / pin / archive / delete
    buttons, no KB listing or store status (operator views); the header says what it may."""
    _, key = server.app.state.keys.create("demo", "ro", scopes=["read"])
    page.goto(f"{server.url}/#key={key}")
    expect(page.get_by_test_id("key-scopes")).to_have_text("read")
    expect(page.get_by_test_id("users-unlisted")).to_contain_text("admin")
    expect(page.get_by_test_id("user-row")).to_have_count(0)
    page.goto(f"{server.url}/#/users/alex/profile")
    expect(page.get_by_test_id("fact-card").first).to_be_visible()
    expect(page.get_by_test_id("history-button").first).to_be_visible()
    for action in ("edit-button", "delete-button", "pin-button", "archive-button"):
        expect(page.get_by_test_id(action)).to_have_count(0)
    page.get_by_test_id("tab-kb").click()
    expect(page.get_by_test_id("kb-needs-admin")).to_be_visible()
    expect(page.get_by_test_id("collection")).to_have_count(0)
    page.get_by_test_id("tab-health").click()
    expect(page.get_by_test_id("status-needs-admin")).to_be_visible()
    # the full key (every scope) still sees the operator views and the edit buttons
    page.get_by_test_id("sign-out").click()
    page.goto("about:blank")  # a fresh load reads the key from the link
    sign_in(page, server, "#/users/alex/profile")
    expect(page.get_by_test_id("key-scopes")).to_have_text("read · write · admin")
    expect(page.get_by_test_id("edit-button").first).to_be_visible()
