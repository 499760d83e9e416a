"""Resources as code at scale: plan and apply a file set of N topics, each with a producer grant (its ACLs) for
one team's service account, through the REST API (acceptance 4 of the self-service-as-code issue).

Starts one broker process (PLAINTEXT, ACLs on, the anonymous principal as super user) and a throwaway SQLite
control plane in this process, raises the team's change rate limit (a thousand changes are beyond the default
60 a minute, which an org admin raises for a team that applies as code), then times with Django's test client
(the whole request path: API key, checks, services, cluster calls, audit):
the first plan (everything to create), the apply, the plan after it (nothing to change), and an apply of the
same files again (nothing to do).

Usage: .venv/bin/python bench/gitops_apply.py [--topics 1000]
Prints one JSON line with the timings in seconds and the counts seen.

Measured on the 2-core development machine at load 27-51 (other engineers' suites and JVMs: the process got a
small share of a core), 1,000 topics + 1,000 producer grants (2,000 ACL bindings) + 1 service account:
first plan 210 s; apply 896 s (its own plan, then 1,000 topic creates in 418 s, 0.42 s each, and 1,000 grants in
280 s, 0.28 s each; 2,001 applied); plan after it 662 s (2,001 unchanged); apply again 345 s (nothing to do).

After reading claims, recorded topics and grants once per plan and reading a topic back by its name alone
(same machine, load 23-46): first plan 116.5 s (22,024 SQL statements: the services' checks of each new
topic and grant); apply 346 s (79,039 statements, its own plan included); plan after it 12.6 s (1,018
statements; was 662 s); apply again 13.5 s (was 345 s). At 100 topics the statements of a plan after apply went
from 614 to 117. What remains is per change: the checks every API call makes (rights, policy, rate, about 20
statements) and one CreateTopics and one CreateAcls round trip each; batching those per cluster is the next step.

With topic creations in CreateTopics requests of 100 and grants in CreateAcls requests of 100, the plan
counting the team's change rate once for all its changes instead of once per change (same machine, load 36
falling to 13 during the run): first plan 39.1 s (16,026 SQL statements), apply 121.8 s (70,060 statements,
2,001 applied), plan after it 5.8 s (1,018), apply again 5.4 s (1,017). An earlier run at load 36 throughout
took 66.0 s / 366.0 s / 16.1 s, and 11 topics of a batch came back after the single-topic deadline (left
"being confirmed"): batched requests now get a deadline that grows with what they carry. At 100 topics the
first plan went from 2,227 statements to 1,626. What remains per change is SQL (about 35 statements for a
created topic or grant: its checks, its operation or grant, its audit row, its claim), not round trips.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.local_broker import start_broker  # noqa: E402 - after the path


def documents(topics: int) -> list[dict]:
    declared: list[dict] = [
        {"kind": "ServiceAccount", "metadata": {"name": "bench-app", "team": "bench"}, "spec": {}}
    ]
    for index in range(topics):
        name = f"bench.topic-{index:05d}"
        place = {"team": "bench", "cluster": "bench"}
        declared.append(
            {
                "kind": "Topic",
                "metadata": {"name": name, **place},
                "spec": {"partitions": 1, "configs": {"retention.ms": 86_400_000}},
            }
        )
        declared.append(
            {
                "kind": "AccessGrant",
                "metadata": {"name": f"{name}-producer", **place},
                "spec": {"serviceAccount": "bench-app", "template": "producer", "topicPrefix": name},
            }
        )
    return declared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=1000)
    options = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-gitops-"))
    os.environ["STREAMHUB_DATA_DIR"] = str(workdir)
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'db.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
    broker, bootstrap = start_broker(
        workdir, {"authorizer.class.name": "acl", "super.users": "User:ANONYMOUS"}
    )
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command
        from django.db import connection
        from django.test import Client

        settings.ALLOWED_HOSTS = ["*"]
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
        call_command("migrate", verbosity=0)

        from django.contrib.auth import get_user_model

        from controlplane.accounts import services as accounts
        from controlplane.clusters import services as clusters
        from controlplane.tenancy import services as tenancy
        from controlplane.tenancy.access import Actor
        from controlplane.tenancy.models import TeamPolicy

        system = Actor.system()
        organization = tenancy.create_organization(actor=system, name="Bench")
        team = tenancy.create_team(actor=system, organization=organization, name="Bench")
        tenancy.add_prefix(actor=system, team=team, resource_type="topic", prefix="bench.")
        TeamPolicy.objects.filter(team=team).update(admin_operations_per_minute=100_000)
        user = get_user_model().objects.create_user("dev", "dev@example.com", "a long bench password")
        tenancy.add_member(actor=system, team=team, user=user, role="developer")
        _key, token = accounts.create_api_key(actor=Actor(user=user), name="bench", role="developer")
        clusters.register_external_cluster(
            actor=system, organization=organization, name="bench", bootstrap_servers=bootstrap
        )
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        body = {"documents": documents(options.topics), "file_set": "bench/kafka"}

        queries: dict[str, int] = {}

        def timed(path: str, phase: str) -> tuple[float, dict]:
            # SQL statements are counted too: unlike seconds, they do not depend on the machine's load.
            queries[phase] = 0

            def count(execute, sql, params, many, context):
                queries[phase] += 1
                return execute(sql, params, many, context)

            started = time.monotonic()
            with connection.execute_wrapper(count):
                response = client.post(path, body, content_type="application/json")
            elapsed = time.monotonic() - started
            assert response.status_code == 200, response.content[:2000]
            print(f"{phase}: {elapsed:.1f} s, {queries[phase]} SQL statements", file=sys.stderr, flush=True)
            return elapsed, response.json()

        first_plan_s, first = timed("/api/v1/declarative/plan/", "first_plan")
        assert first["counts"]["create"] == 2 * options.topics + 1, first["counts"]
        apply_s, applied = timed("/api/v1/declarative/apply/", "apply")
        report = applied["change_set"]["report"]
        assert applied["change_set"]["state"] == "applied", report["counts"]
        second_plan_s, second = timed("/api/v1/declarative/plan/", "plan_after_apply")
        unchanged = second["counts"]["unchanged"]
        refused = [(c["name"], c["refusal"]["code"]) for c in second["changes"] if c["action"] == "refused"]
        assert unchanged == 2 * options.topics + 1, (second["counts"], refused[:20], report["counts"])
        again_s, again = timed("/api/v1/declarative/apply/", "apply_again")
        assert again["change_set"] is None
        print(
            json.dumps(
                {
                    "topics": options.topics,
                    "grants": options.topics,
                    "acl_bindings": 2 * options.topics,  # a producer grant: WRITE and DESCRIBE on its prefix
                    "first_plan_s": round(first_plan_s, 1),
                    "apply_s": round(apply_s, 1),
                    "applied": report["counts"]["applied"],
                    "plan_after_apply_s": round(second_plan_s, 1),
                    "unchanged_after_apply": unchanged,
                    "apply_again_s": round(again_s, 1),
                    "sql_queries": queries,
                }
            )
        )
    finally:
        broker.kill()
        broker.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
