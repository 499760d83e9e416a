import shutil
import subprocess

import pytest

from tests.fixtures.servers import REPO_ROOT

pytestmark = pytest.mark.integration


def _compose_config(env: dict[str, str]) -> subprocess.CompletedProcess:
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is not installed (scripts/bootstrap.sh --test installs it)")
    return subprocess.run(
        ["docker-compose", "-f", str(REPO_ROOT / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},
        timeout=60,
    )


def test_it_validates_the_production_compose_file() -> None:
    result = _compose_config({"POSTGRES_PASSWORD": "pw", "SECRET_KEY": "k"})

    assert result.returncode == 0, result.stderr
    for service in ("postgres", "redis", "web", "worker", "streams", "beat", "broker-1"):
        assert f"  {service}:" in result.stdout


def test_it_refuses_to_render_without_the_required_secrets() -> None:
    result = _compose_config({})

    assert result.returncode != 0
    assert "POSTGRES_PASSWORD" in result.stderr
