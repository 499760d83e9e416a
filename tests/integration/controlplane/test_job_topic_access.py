"""Job runs are refused at submit when they name topics the team may not read or write."""

import pytest

from controlplane.clusters.models import Cluster
from controlplane.jobs.models import JobRun
from controlplane.jobs.services import topics_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_the_topics_a_jobs_parameters_name_are_found() -> None:
    assert topics_of({"source": {"topic": "a"}, "target_topic": "b", "sql": "x"}) == ({"a"}, {"b"})
    assert topics_of({"topic": "a", "group_id": "g"}) == ({"a"}, set())


def test_a_run_over_another_teams_topic_is_refused_at_submit(world) -> None:
    # A PLAINTEXT cluster and no service account: the team's prefixes are all that can grant access.
    cluster = Cluster.objects.create(
        organization=world.organization, name="plain", provider="external", status="running",
        bootstrap_servers="127.0.0.1:9",
    )  # fmt: skip
    client = world.team_a_developer.client()

    def launch(parameters: dict) -> object:
        body = {"team": world.team_a.id, "cluster": cluster.id, "job": "key_skew", "parameters": parameters}
        return client.post("/api/v1/job-runs/", body, format="json")

    refused = launch({"source": {"topic": "search.queries"}, "top": 3})
    assert refused.status_code == 403, refused.json()
    assert refused.json()["error"]["code"] == "topic_not_allowed"
    assert "search" not in refused.content.decode().lower()
    copy = client.post(
        "/api/v1/job-runs/",
        {
            "team": world.team_a.id, "cluster": cluster.id, "job": "topic_copy",
            "parameters": {"source": {"topic": "payments.orders"}, "target_topic": "search.stolen"},
        },
        format="json",
    )  # fmt: skip
    assert copy.status_code == 403, copy.json()
    assert not JobRun.objects.exists()

    accepted = launch({"source": {"topic": "payments.orders"}, "top": 3})
    assert accepted.status_code == 201, accepted.json()
