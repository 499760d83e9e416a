"""The `metadata-records-typed` contract (pyproject.toml): metadata record types are defined, and their
JSON decoded, only by the record modules; it breaks on a deliberate violation.

`lint-imports` runs with the project's configuration, limited to this contract, over a miniature tree
with the same modules the contract names, in a temporary directory (as tests/unit/test_architecture_contracts.py
does for the boundary contracts).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACT = "metadata-records-typed"
CONTRACT_NAME = "Metadata records are defined and decoded only by the typed record modules"

CLEAN_TREE = {
    "broker/__init__.py": "",
    "broker/metadata/__init__.py": "",
    "broker/metadata/metadata_records.py": "",
    "broker/metadata/security_records.py": "from broker.metadata import metadata_records\n",
    "broker/metadata/security_registry.py": "from broker.metadata import security_records\n",
    "broker/controller/__init__.py": "",
    "broker/controller/records.py": ("from broker.metadata import metadata_records, security_records\n"),
    "broker/controller/image.py": "from broker.controller import records\nfrom broker.metadata import metadata_records\n",
    "broker/controller/decisions.py": "from broker.controller import image, records\n",
    "broker/controller/server.py": "from broker.controller import decisions, image, records\n",
    "broker/handlers/__init__.py": "",
    "broker/handlers/acls.py": "from broker.metadata import security_records\n",
    # The other root packages of the configuration.
    "controlplane/__init__.py": "",
    "console/__init__.py": "",
    "cli/streamhub/__init__.py": "",
}

VIOLATIONS = [
    # A handler defining its own record type.
    ("broker/handlers/acls.py", "from broker.metadata.metadata_records import MetadataRecord, record_type"),
    # The controller's RPC side decoding records itself instead of through broker.controller.records.
    ("broker/controller/server.py", "from broker.metadata.metadata_records import decode_record"),
    # Inside broker.metadata too.
    ("broker/metadata/security_registry.py", "from broker.metadata import metadata_records"),
]


def lint(base: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), str(ROOT / "pyproject.toml"), "--no-cache", "--contract", CONTRACT],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write_tree(base: Path, tree: dict[str, str]) -> None:
    for name, source in tree.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def test_the_contract_holds_on_a_tree_that_keeps_it(tmp_path: Path) -> None:
    write_tree(tmp_path, CLEAN_TREE)
    result = lint(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{CONTRACT_NAME} KEPT" in " ".join(result.stdout.split())


@pytest.mark.parametrize(("module", "statement"), VIOLATIONS)
def test_the_contract_breaks_on_a_deliberate_violation(tmp_path: Path, module: str, statement: str) -> None:
    tree = dict(CLEAN_TREE)
    tree[module] += statement + "  # the deliberate violation\n"
    write_tree(tmp_path, tree)
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{CONTRACT_NAME} BROKEN" in " ".join(result.stdout.split()), result.stdout
    assert module.removesuffix(".py").replace("/", ".") in result.stdout
