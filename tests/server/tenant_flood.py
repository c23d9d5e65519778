"""Run in a fresh process by ``test_tenant_bound.py``: a REST server (the real embedder,
loaded once) whose ``tenants`` tenants each make one request (add a message), printing after
each request the number of open tenant stores and the process's resident memory as JSON.

``python -m tests.server.tenant_flood <tenants> <max_open> <data dir>``; the store (a
directory, or PostgreSQL through ``MADELEINE_STORE``) comes from the environment."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from madeleine.server.app import ServerSettings, create_app
from tests.api.memory_cycles import anonymous_bytes, resident_bytes


def main(argv: list[str]) -> None:
    count, max_open, data = int(argv[0]), int(argv[1]), Path(argv[2])
    keys = {f"key-{n}": f"tenant{n}" for n in range(count)}
    server = ServerSettings(data=data, api_keys=keys, max_open_tenants=max_open)
    app = create_app(server)
    with TestClient(app) as client:
        for n in range(count):
            response = client.post(
                "/v1/memories",
                json={
                    "messages": [{"role": "user", "content": f"I live in Busan, {n}"}],
                    "user_id": "u",
                },
                headers={"Authorization": f"Bearer key-{n}"},
            )
            assert response.status_code == 200, response.text
            tenants = app.state.tenants
            step = {"tenants": n + 1, "open": tenants.opened(), "closing": tenants.closing()}
            if n % 10 == 9 or n == count - 1:
                gc.collect()
                step["rss"], step["anon"] = resident_bytes(), anonymous_bytes()
            print(json.dumps(step), flush=True)
    left = app.state.tenants.opened() + app.state.tenants.closing()
    print(json.dumps({"left": left}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
