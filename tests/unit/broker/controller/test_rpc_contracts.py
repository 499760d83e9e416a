"""The contracts that make typed messages the only controller wire format (pyproject.toml
`controller-rpc-frames-sealed`, `controller-handlers-typed`) hold, and break on a deliberate
violation made in a copy of the broker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fixtures.import_contracts import REPO_ROOT, broker_contracts_only, lint_imports

REPO = REPO_ROOT
CONTRACTS = ("controller-rpc-frames-sealed", "controller-handlers-typed")
FRAMES_SEALED = "Only the controller listener and the controller client use the controller RPC frame codec"
HANDLERS_TYPED = "The controller RPC handlers take and return typed messages: no frames, sockets or clients"


def test_the_broker_keeps_them() -> None:
    result = lint_imports(REPO, CONTRACTS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        # A forwarding path writing frames itself instead of sending a typed request.
        ("broker/controller/forwarding.py", "from broker.controller.rpc import frames", FRAMES_SEALED),
        # A handler reaching for the wire.
        ("broker/controller/handlers/admin.py", "from broker.raft import wire", HANDLERS_TYPED),
    ],
)
def test_a_deliberate_violation_breaks_one(
    tmp_path: Path, module: str, statement: str, contract: str
) -> None:
    shutil.copytree(REPO / "broker", tmp_path / "broker", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pyproject.toml").write_text(broker_contracts_only(CONTRACTS))
    path = tmp_path / module
    path.write_text(path.read_text() + statement + "  # the deliberate violation\n")
    result = lint_imports(tmp_path, CONTRACTS)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{contract} BROKEN" in " ".join(result.stdout.split()), result.stdout
    assert module.removesuffix(".py").replace("/", ".") in result.stdout
