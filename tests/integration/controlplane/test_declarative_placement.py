"""Well-formed documents the plan cannot place (no team, no cluster, a resource declared twice) are refused
entries of the plan, beside its other changes, not a 400 for the whole request: the OpenAPI document
describes every document the server reads (schemathesis' positive_data_acceptance holds), and a plan with
refusals is refused whole by apply with 409 plan_refused."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def _account(name: str, **metadata: str) -> dict:
    return {"kind": "ServiceAccount", "metadata": {"name": name, **metadata}, "spec": {}}


def test_unplaced_and_twice_declared_documents_are_refused_entries_and_apply_refuses_the_plan(world) -> None:
    client = world.team_a_admin.client()
    team = world.team_a.slug
    documents = [
        _account("payments-nowhere"),
        {"kind": "Topic", "metadata": {"name": "payments.orders", "team": team}, "spec": {"partitions": 1}},
        _account("payments-twice", team=team),
        _account("payments-twice", team=team),
    ]

    plan = client.post(
        "/api/v1/declarative/plan/", {"documents": documents, "file_set": "repo"}, format="json"
    )

    assert plan.status_code == 200, plan.json()
    refusals = {
        (change["document"], change["refusal"]["code"])
        for change in plan.json()["changes"]
        if change["action"] == "refused"
    }
    assert refusals == {(0, "no_team"), (1, "no_cluster"), (3, "declared_twice")}
    applied = client.post(
        "/api/v1/declarative/apply/", {"documents": documents, "file_set": "repo"}, format="json"
    )
    assert applied.status_code == 409, applied.json()
    assert applied.json()["error"]["code"] == "plan_refused"
    placed = client.post(
        "/api/v1/declarative/plan/",
        {"documents": documents[:1], "file_set": "repo", "team": team},
        format="json",
    )
    assert [change["action"] for change in placed.json()["changes"]] == ["create"]
