"""The OpenAPI document is generated from the code; the console's typed client is generated from it."""

import os
import subprocess
import sys

import pytest

from tests.fixtures.servers import REPO_ROOT


def _generate_schema(*, on_sqlite: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if on_sqlite:
        env.pop("DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def generated() -> subprocess.CompletedProcess:
    """One generation (a Django start and the whole API walked: ~20 s on two cores) for the checks of it."""
    return _generate_schema()


def test_it_generates_a_valid_openapi_schema_without_warnings(generated: subprocess.CompletedProcess) -> None:
    assert generated.returncode == 0, generated.stderr
    assert generated.stdout.startswith("openapi: 3.")


def test_it_keeps_the_console_client_schema_in_step_with_the_api(
    generated: subprocess.CompletedProcess,
) -> None:
    committed = (REPO_ROOT / "frontend" / "openapi.yaml").read_text()

    assert committed == generated.stdout, (
        "frontend/openapi.yaml is stale: run `.venv/bin/python manage.py spectacular --file frontend/openapi.yaml`"
        " and `npm --prefix frontend run gen:api`"
    )


def test_the_schema_does_not_depend_on_the_database() -> None:
    # An integer model field without a stated bound takes the database's range (SQLite's is 64-bit).
    if not os.environ.get("DATABASE_URL"):
        pytest.skip("this run is on SQLite already: the test above compared the document generated on it")
    committed = (REPO_ROOT / "frontend" / "openapi.yaml").read_text()

    assert committed == _generate_schema(on_sqlite=True).stdout, (
        "the OpenAPI document differs on SQLite: state a MaxValueValidator on the integer field named in the diff"
    )
