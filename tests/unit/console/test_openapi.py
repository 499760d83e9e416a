"""The OpenAPI document is generated from the code; the console's typed client is generated from it."""

import subprocess
import sys

from tests.fixtures.servers import REPO_ROOT


def _generate_schema() -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_it_generates_a_valid_openapi_schema_without_warnings() -> None:
    result = _generate_schema()

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("openapi: 3.")


def test_it_keeps_the_console_client_schema_in_step_with_the_api() -> None:
    committed = (REPO_ROOT / "frontend" / "openapi.yaml").read_text()

    assert committed == _generate_schema().stdout, (
        "frontend/openapi.yaml is stale: run `.venv/bin/python manage.py spectacular --file frontend/openapi.yaml`"
        " and `npm --prefix frontend run gen:api`"
    )
