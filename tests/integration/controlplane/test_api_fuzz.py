"""Schemathesis against the published OpenAPI document, in process through Django's WSGI application, with
every check of the pinned schemathesis (tests/fixtures/api_fuzz.py), as an org admin and as a developer of
one team: generated requests (valid and invalid) for every operation and stateful sequences. Bounded for CI
(a few examples per operation); bench/api_fuzz.py runs it at full strength with the coverage phase.

Any failed check fails the test: there is no list of tolerated findings."""

from __future__ import annotations

import pytest
from schemathesis.checks import CHECKS as REGISTERED_CHECKS
from schemathesis.specs.openapi import checks as openapi_checks

from console.wsgi import application
from tests.fixtures.api_fuzz import CHECKS, run_schemathesis

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_every_check_of_the_pinned_version_runs() -> None:
    assert openapi_checks.__name__  # importing it registers the OpenAPI checks
    registered = {check.__name__ for check in REGISTERED_CHECKS.get_all()}

    assert registered == set(CHECKS)


@pytest.mark.parametrize("caller", ["org_admin", "team_a_developer"])
def test_schemathesis_finds_nothing(caller: str, world, in_process) -> None:
    run = run_schemathesis(
        app=application,
        token=getattr(world, caller).token,
        max_examples=2,
        phases=("fuzzing", "stateful"),
        max_steps=6,
    )

    print(f"\n{caller}: {run.responses} responses\n{run.table()}")
    assert run.errors == []
    assert run.responses > 500
    findings = run.unique_findings()
    assert findings == [], "\n".join(str(finding) for finding in findings)
