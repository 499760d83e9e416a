"""The broker's architecture contracts (pyproject.toml `[tool.importlinter]`): its packages are
layered in one direction and no package has an import cycle, hidden imports included.

Each contract is also shown to fail on a deliberate violation, made in a copy of the broker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fixtures.import_contracts import REPO_ROOT, broker_contracts_only, lint_imports

REPO = REPO_ROOT
BROKER_CONTRACTS = ("broker-layers", "broker-acyclic")


@pytest.fixture
def broker_copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "broker", tmp_path / "broker", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pyproject.toml").write_text(broker_contracts_only(BROKER_CONTRACTS))
    return tmp_path


def append(path: Path, code: str) -> None:
    path.write_text(path.read_text() + code)


def test_it_keeps_the_broker_contracts() -> None:
    result = lint_imports(REPO, BROKER_CONTRACTS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_the_copy_keeps_them_before_it_is_broken(broker_copy: Path) -> None:
    result = lint_imports(broker_copy, BROKER_CONTRACTS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_refuses_a_lower_layer_importing_a_higher_one_even_inside_a_function(broker_copy: Path) -> None:
    append(
        broker_copy / "broker" / "config.py",
        "\n\ndef _server_grace() -> float:\n    from broker.server import app\n\n    return app.SHUTDOWN_GRACE_S\n",
    )
    result = lint_imports(broker_copy, BROKER_CONTRACTS)
    assert result.returncode != 0
    assert "broker packages are layered in one direction BROKEN" in result.stdout
    assert "broker.config -> broker.server.app" in result.stdout


def test_it_refuses_a_cycle_hidden_behind_type_checking(broker_copy: Path) -> None:
    append(
        broker_copy / "broker" / "log" / "segment.py",
        "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from broker.log.log_manager import LogManager\n",
    )
    result = lint_imports(broker_copy, BROKER_CONTRACTS)
    assert result.returncode != 0
    assert "no import cycles inside broker BROKEN" in result.stdout
    assert "- .segment -> .log_manager" in result.stdout
