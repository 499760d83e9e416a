"""Console topics page with thousands of topics (acceptance 3 of the console issue: search under 100 ms).

Starts a broker, Redis, a throwaway SQLite control plane with `--topics` topics of one team (rows, as the
reconciler leaves them), the product's web server (granian, the production console build served by
whitenoise) and Debian's Chromium through Playwright. Signs in, opens /topics and times:

- the list: from navigation until the page shows every topic (request, JSON of all rows, first render);
- each search: from typing a topic's full name into the search box until the frame showing the one match is
  painted (the same in-browser measurement as tests/e2e/test_topics_and_messages.py), `--searches` times
  over names spread across the list, clearing the box in between.

Usage: .venv/bin/python bench/console_search.py [--topics 2000] [--searches 30]
Needs the console build (`npm --prefix frontend run build`) and Chromium (scripts/bootstrap.sh --test).
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.control_plane_lists import free_port, start_broker  # noqa: E402 - the repository root comes first
from bench.lag_sampling import start_redis  # noqa: E402
from console.webserver import web_server_command  # noqa: E402
from tests.e2e.measurements import SEARCH_AND_MEASURE  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PASSWORD = "a long bench password"
PREFIX = "payments."


def seed(bootstrap: str, topics: int) -> None:
    from django.contrib.auth import get_user_model

    from controlplane.clusters import services as clusters
    from controlplane.tenancy import services as tenancy
    from controlplane.tenancy.access import Actor
    from controlplane.tenancy.choices import PrefixResourceType
    from controlplane.topics.models import Topic

    system = Actor.system()
    user = get_user_model().objects.create_user("olga", "olga@example.com", PASSWORD)
    organization = tenancy.create_organization(actor=system, name="Acme")
    tenancy.add_org_member(actor=system, organization=organization, user=user, is_org_admin=True)
    team = tenancy.create_team(actor=system, organization=organization, name="Payments")
    tenancy.add_prefix(actor=system, team=team, resource_type=PrefixResourceType.TOPIC, prefix=PREFIX)
    cluster = clusters.register_external_cluster(
        actor=Actor(user=user), organization=organization, name="orders", bootstrap_servers=bootstrap
    )
    Topic.objects.bulk_create(
        Topic(
            cluster=cluster,
            team=team,
            name=f"{PREFIX}stream-{index:05d}",
            partitions=1 + index % 12,
            exists_on_cluster=True,
            size_bytes=index * 1024,
        )
        for index in range(topics)
    )


def wait_for_port(port: int, seconds: float) -> None:
    import socket

    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def measure(base: str, topics: int, searches: int) -> dict:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(60_000)
            page.goto(f"{base}/login")
            page.get_by_label("Username").fill("olga")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_role("heading", name="Overview", level=1)).to_be_visible()

            count = page.get_by_test_id("topic-count")
            started = time.perf_counter()
            page.get_by_role("navigation", name="Main").get_by_role("link", name="Topics", exact=True).click()
            expect(count).to_have_text(f"{topics} topics")
            list_ms = (time.perf_counter() - started) * 1000
            rows_in_page = page.get_by_role("table", name="Topics").get_by_role("row").count()

            search = page.get_by_label("Search topics")
            timings = []
            for step in range(searches):
                index = (step * 7919) % topics  # spread over the list, first and last rows included over time
                search.fill("")
                expect(count).to_have_text(f"{topics} topics")
                timings.append(page.evaluate(SEARCH_AND_MEASURE, f"stream-{index:05d}"))
            return {"list_ms": list_ms, "rows_in_page": rows_in_page, "search_ms": timings}
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--searches", type=int, default=30)
    options = parser.parse_args()
    if not (REPO / "frontend" / "dist" / "index.html").exists():
        raise SystemExit("frontend/dist is missing: run `npm --prefix frontend run build` first")
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"Chromium not found at {CHROMIUM} (scripts/bootstrap.sh --test installs it)")

    workdir = Path(tempfile.mkdtemp(prefix="bench-console-"))
    os.environ["STREAMHUB_DATA_DIR"] = str(workdir)
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir / 'db.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    os.environ["DEBUG"] = "0"
    broker, bootstrap = start_broker(workdir)
    redis_server, os.environ["REDIS_URL"] = start_redis(workdir)  # the overview's throughput reads it
    server = None
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("collectstatic", "--noinput", verbosity=0)
        seed(bootstrap, options.topics)

        port = free_port()
        server = subprocess.Popen(
            web_server_command(host="127.0.0.1", port=port, workers=1, access_log=False, log_level="warning"),
            cwd=REPO,
            env={**os.environ, "LOG_LEVEL": "WARNING"},
        )
        wait_for_port(port, 60)
        result = measure(f"http://127.0.0.1:{port}", options.topics, options.searches)
        timings = sorted(result["search_ms"])
        print(
            json.dumps(
                {
                    "topics": options.topics,
                    "list_to_rendered_ms": round(result["list_ms"], 1),
                    "table_rows_in_page": result["rows_in_page"],
                    "searches": len(timings),
                    "search_p50_ms": round(statistics.median(timings), 1),
                    "search_p90_ms": round(timings[int(len(timings) * 0.9)], 1),
                    "search_max_ms": round(timings[-1], 1),
                    "load_average_1m": round(os.getloadavg()[0], 1),
                }
            )
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        broker.kill()
        redis_server.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
