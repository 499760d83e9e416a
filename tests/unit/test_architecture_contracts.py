"""The import contracts of pyproject.toml (`[tool.importlinter]`) break on a deliberate violation.

`lint-imports` runs with the project's own configuration over a miniature tree with the same root
packages (broker, controlplane, console) in a temporary directory: clean it passes, and each violation
the contracts exist for makes it fail naming the broken contract.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# module path -> source; the imports every contract allows.
CLEAN_TREE = {
    "broker/__init__.py": "",
    "broker/config.py": "",
    "broker/log/__init__.py": "",
    "broker/log/errors.py": "from broker.wire.records import errors\n",
    "broker/server/__init__.py": "",
    "broker/server/app.py": "from broker import config\nfrom broker.log import errors\n",
    "broker/wire/__init__.py": "",
    "broker/wire/frames.py": "import kio\n",
    "broker/wire/records/__init__.py": "",
    "broker/wire/records/errors.py": "import kio\n",
    "controlplane/__init__.py": "",
    # Domain errors: plain exceptions; the API layer maps them to HTTP.
    "controlplane/core/__init__.py": "",
    "controlplane/core/errors.py": "",
    "controlplane/core/api/__init__.py": "",
    "controlplane/core/api/errors.py": "import rest_framework\nfrom controlplane.core import errors\n",
    # The identity apps, bottom to top: core records changes through a signal (core.changes) that audit
    # receives; tenancy holds the scoped viewsets; accounts' and people's authentication build the Actor
    # through tenancy's Credentials protocol.
    "controlplane/core/changes.py": "import django\nfrom controlplane.core import errors\n",
    "controlplane/tenancy/__init__.py": "",
    "controlplane/tenancy/models.py": "import django\n",
    "controlplane/tenancy/access.py": "import django\nfrom controlplane.core import errors\n",
    "controlplane/tenancy/services.py": "from controlplane.core import changes\nfrom controlplane.tenancy import access\n",
    "controlplane/tenancy/api/__init__.py": "",
    "controlplane/tenancy/api/viewsets.py": (
        "import rest_framework\nfrom controlplane.core import changes\nfrom controlplane.tenancy import access\n"
    ),
    "controlplane/audit/__init__.py": "",
    "controlplane/audit/services.py": "from controlplane.core import changes\nfrom controlplane.tenancy import access\n",
    "controlplane/accounts/__init__.py": "",
    "controlplane/accounts/models.py": "from controlplane.tenancy import access, models\n",
    "controlplane/accounts/api/__init__.py": "",
    "controlplane/accounts/api/authentication.py": (
        "import rest_framework\nfrom controlplane.accounts import models\nfrom controlplane.tenancy.api import viewsets\n"
    ),
    "controlplane/people/__init__.py": "",
    "controlplane/people/models.py": "from controlplane.tenancy import models\n",
    "controlplane/people/services.py": "from controlplane.core import changes\nfrom controlplane.audit import services\n",
    "controlplane/kafka/__init__.py": "",
    "controlplane/kafka/wire.py": "import kio\nfrom broker.wire import frames\n",
    "controlplane/kafka/admin.py": "import confluent_kafka\n",
    "controlplane/clusters/__init__.py": "",
    "controlplane/clusters/connections.py": "import django\nfrom controlplane.kafka import admin, wire\n",
    "controlplane/clusters/services.py": (
        "import celery\nfrom controlplane.clusters import connections, provisioners\n"
        "from controlplane.tenancy import access\n"
    ),
    "controlplane/clusters/provisioners/__init__.py": "from controlplane.kafka import wire\n",
    "controlplane/clusters/workflows.py": "from controlplane.clusters import services\n",
    "controlplane/clusters/tasks.py": "from controlplane.clusters import workflows\n",
    **{
        f"controlplane/{app}/__init__.py": "from controlplane.clusters import connections\n"
        for app in ("acls", "credentials", "groups", "jobs", "lag", "quotas", "reconcile")
    },
    "controlplane/topics/__init__.py": "",
    "controlplane/topics/api/__init__.py": "import rest_framework\nfrom controlplane.topics import services\n",
    "controlplane/topics/models.py": "import django\nfrom controlplane.clusters import connections\n",
    "controlplane/topics/services.py": (
        "from controlplane.core import errors\nfrom controlplane.topics import models\n"
        "from controlplane.tenancy import access\n"
    ),
    "controlplane/topics/tasks.py": "from controlplane.topics import services\n",
    "controlplane/spark/__init__.py": "",
    "controlplane/spark/raw_reading.py": "import kio\nfrom broker.wire.records import errors\n",
    "controlplane/spark/reading.py": "import confluent_kafka\n",
    "controlplane/alerts/__init__.py": "from controlplane import lag\nfrom controlplane.clusters import connections\n",
    "controlplane/alerts/evaluation.py": "",
    "controlplane/apache_kafka/__init__.py": "",
    "controlplane/apache_kafka/runtime.py": "import subprocess\n",
    # Connect's REST API and workers are reached through connect.services only; replication sits on top.
    "controlplane/connect/__init__.py": "",
    "controlplane/connect/rest.py": "import requests\n",
    "controlplane/connect/workers.py": "import subprocess\n",
    "controlplane/connect/services.py": "from controlplane.connect import rest, workers\n",
    "controlplane/replication/__init__.py": "from controlplane.connect import services\n",
    "controlplane/schemas/__init__.py": "",
    # Resources as code sit on top of the apps whose services they call; the apps never import them back.
    "controlplane/declarative/__init__.py": (
        "from controlplane import topics\nfrom controlplane.clusters import connections\n"
    ),
    # The CLI (a namespace folder `cli`, installed alone as `streamhub`) speaks only HTTP.
    "cli/streamhub/__init__.py": "",
    "cli/streamhub/api.py": "import requests\n",
    "cli/streamhub/main.py": "import click\nfrom . import api\n",
    "console/__init__.py": "",
    "console/celery.py": "import celery\nimport django\nfrom controlplane.clusters import services\n",
}

# Every contract of pyproject.toml but the broker's inner ones, which need modules this tree does not have: the
# file named beside each breaks it on a copy of the broker (or a tree of its own).
CONTRACTS = {
    contract["id"]: contract["name"]
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
}
BROKER_INNER_CONTRACTS = {
    "broker-layers": "tests/unit/test_broker_layers.py",
    "broker-acyclic": "tests/unit/test_broker_layers.py",
    "metadata-records-typed": "tests/unit/broker/controller/test_records_contract.py",
    "controller-rpc-frames-sealed": "tests/unit/broker/controller/test_rpc_contracts.py",
    "controller-handlers-typed": "tests/unit/broker/controller/test_rpc_contracts.py",
}
BOUNDARY_CONTRACTS = tuple(id_ for id_ in CONTRACTS if id_ not in BROKER_INNER_CONTRACTS)

# (module that gains an import, the import, the id of the contract that must break)
VIOLATIONS = [
    ("broker/log/errors.py", "from controlplane.clusters import services", "broker-standalone"),
    ("broker/server/app.py", "import django", "broker-standalone"),
    ("broker/wire/frames.py", "from broker.server import app", "broker-wire-sealed"),
    ("controlplane/clusters/services.py", "from broker.server import app", "controlplane-broker-wire-only"),
    ("controlplane/clusters/services.py", "from console.celery import app", "controlplane-no-console"),
    # Indirect: every app that uses clusters.connections would reach provisioning through it.
    (
        "controlplane/clusters/connections.py",
        "from controlplane.clusters import services",
        "cluster-users-not-provisioning",
    ),
    (
        "controlplane/lag/__init__.py",
        "from controlplane.clusters import tasks",
        "cluster-users-not-provisioning",
    ),
    ("controlplane/lag/__init__.py", "from controlplane.alerts import evaluation", "lag-alerts-seam"),
    # Indirect: the Spark source reaches Django through a control plane app.
    (
        "controlplane/spark/raw_reading.py",
        "from controlplane.tenancy import access",
        "spark-source-standalone",
    ),
    ("controlplane/spark/raw_reading.py", "from broker.log import errors", "spark-source-standalone"),
    ("controlplane/apache_kafka/runtime.py", "import django", "apache-kafka-standalone"),
    (
        "controlplane/apache_kafka/runtime.py",
        "from controlplane.kafka import wire",
        "apache-kafka-standalone",
    ),
    ("controlplane/topics/services.py", "from controlplane.connect import rest", "connect-rest-seam"),
    ("controlplane/replication/__init__.py", "from controlplane.connect import workers", "replication-seam"),
    ("controlplane/connect/services.py", "from controlplane import replication", "replication-on-top"),
    ("cli/streamhub/api.py", "import django", "cli-standalone"),
    # Indirect: the CLI reaching the control plane through a module of its own.
    ("cli/streamhub/api.py", "from controlplane.tenancy import access", "cli-standalone"),
    ("controlplane/topics/__init__.py", "from controlplane import declarative", "declarative-on-top"),
    # A cycle between two apps, directly (clusters <-> acls) or through a third (tenancy -> clusters -> tenancy).
    ("controlplane/clusters/connections.py", "from controlplane import acls", "controlplane-apps-acyclic"),
    (
        "controlplane/tenancy/access.py",
        "from controlplane.clusters import services",
        "controlplane-apps-acyclic",
    ),
    ("controlplane/core/errors.py", "from controlplane.tenancy import models", "controlplane-apps-acyclic"),
    # The identity apps' former cycle, each edge of it: the REST glue in core reaching the apps built on it,
    # tenancy's services writing the audit log straight, the scoped viewsets knowing an authentication.
    (
        "controlplane/core/api/errors.py",
        "from controlplane.accounts import models",
        "controlplane-apps-acyclic",
    ),
    (
        "controlplane/tenancy/services.py",
        "from controlplane.audit import services",
        "controlplane-apps-acyclic",
    ),
    (
        "controlplane/tenancy/api/viewsets.py",
        "from controlplane.accounts.api import authentication",
        "controlplane-apps-acyclic",
    ),
    # A domain module reaching DRF: directly, through the API layer's error mapping, or through an app's API.
    ("controlplane/topics/models.py", "import rest_framework", "domain-without-drf"),
    (
        "controlplane/topics/services.py",
        "from controlplane.core.api import errors as api",
        "domain-without-drf",
    ),
    ("controlplane/topics/tasks.py", "from controlplane.topics import api", "domain-without-drf"),
    ("controlplane/core/errors.py", "from rest_framework import exceptions", "domain-without-drf"),
    # The Kafka protocol or a client outside controlplane.kafka (provisioning once issued certificates from
    # broker.wire; the lag sampler had its own kio client and record decoder).
    (
        "controlplane/clusters/provisioners/__init__.py",
        "from broker.wire import frames",
        "kafka-only-cluster-client",
    ),
    ("controlplane/lag/__init__.py", "import kio", "kafka-only-cluster-client"),
    ("controlplane/alerts/evaluation.py", "import confluent_kafka", "kafka-only-cluster-client"),
    ("console/celery.py", "from broker.wire.records import errors", "kafka-only-cluster-client"),
]


def test_every_contract_is_broken_on_purpose_here_or_in_the_broker_copy() -> None:
    broken_here = {contract for _module, _statement, contract in VIOLATIONS}
    assert broken_here == set(BOUNDARY_CONTRACTS)
    assert set(BROKER_INNER_CONTRACTS) <= set(CONTRACTS)
    for contract, test_file in BROKER_INNER_CONTRACTS.items():  # the file that breaks it names it
        assert f'"{contract}"' in (ROOT / test_file).read_text(), (contract, test_file)


def _write_tree(base: Path, tree: dict[str, str]) -> None:
    for name, source in tree.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def _lint_imports(base: Path) -> subprocess.CompletedProcess[str]:
    # cwd first on the import path (lint-imports puts it there), so the miniature packages stand in for
    # the real ones; the configuration is the project's own, limited to the boundary contracts this tree
    # models (contracts on the broker's inner layers need modules it does not have).
    contracts = [argument for contract in BOUNDARY_CONTRACTS for argument in ("--contract", contract)]
    return subprocess.run(
        [str(LINT_IMPORTS), str(ROOT / "pyproject.toml"), "--no-cache", *contracts],
        cwd=base,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _kept_and_broken(output: str) -> tuple[int, int]:
    summary = next(line for line in output.splitlines() if line.startswith("Contracts: "))
    kept, broken = (int(part.split()[0]) for part in summary.removeprefix("Contracts: ").split(", "))
    return kept, broken


def test_the_contracts_hold_on_a_tree_that_keeps_them(tmp_path: Path) -> None:
    _write_tree(tmp_path, CLEAN_TREE)
    result = _lint_imports(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    kept, broken = _kept_and_broken(result.stdout)
    assert broken == 0
    assert kept == len(BOUNDARY_CONTRACTS)


@pytest.mark.parametrize(("module", "statement", "contract"), VIOLATIONS)
def test_lint_imports_fails_on_a_deliberate_violation(
    tmp_path: Path, module: str, statement: str, contract: str
) -> None:
    tree = dict(CLEAN_TREE)
    tree[module] += statement + "  # the deliberate violation\n"
    _write_tree(tmp_path, tree)
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert _kept_and_broken(result.stdout)[1] >= 1
    # Long contract names wrap in the summary: compare with whitespace normalised.
    assert f"{' '.join(CONTRACTS[contract].split())} BROKEN" in " ".join(result.stdout.split()), result.stdout
    if contract == "controlplane-apps-acyclic":  # reported app by app: "- .clusters -> .acls (1 import)"
        breakers = [line for line in result.stdout.splitlines() if line.startswith("- .") and " -> ." in line]
        assert any(f".{module.split('/')[1]} " in f"{line} " for line in breakers), result.stdout
    else:
        assert module.removesuffix(".py").removesuffix("/__init__").replace("/", ".") in result.stdout


# tests/unit/ mirrors the source tree: tests/unit/<folder>/test_<module>.py tests <folder>/<module>.py (or the
# package <folder>/<module>/), and test_<module>_<aspect>.py one aspect of it; tests/unit/cli/ mirrors
# cli/streamhub/. Cross-cutting tests, each with why it mirrors no one module:
CROSS_CUTTING_TESTS = {
    # the import contracts of the whole tree (and this layout)
    "tests/unit/test_architecture_contracts.py",
    # the OpenAPI document of every app's API, generated and compared with frontend/openapi.yaml
    "tests/unit/console/test_openapi.py",
}


def _source_folder(test_folder: Path) -> Path:
    parts = test_folder.relative_to(ROOT / "tests" / "unit").parts
    if parts[:1] == ("cli",):
        parts = ("cli", "streamhub", *parts[1:])
    return ROOT.joinpath(*parts)


def _mirrors_a_module(test_file: Path) -> bool:
    folder = _source_folder(test_file.parent)
    if not folder.is_dir():
        return False
    modules = {path.stem for path in folder.glob("*.py")} | {
        path.name for path in folder.iterdir() if (path / "__init__.py").is_file()
    }
    modules.discard("__init__")
    tested = test_file.stem.removeprefix("test_")
    return any(tested == module or tested.startswith(f"{module}_") for module in modules)


def test_every_unit_test_file_mirrors_a_source_module() -> None:
    tests = sorted((ROOT / "tests" / "unit").rglob("test_*.py"))
    astray = [
        str(path.relative_to(ROOT))
        for path in tests
        if str(path.relative_to(ROOT)) not in CROSS_CUTTING_TESTS and not _mirrors_a_module(path)
    ]
    assert not astray, (
        f"unit tests at paths that mirror no source module (tests/unit/<folder>/test_<module>.py): {astray}"
    )
    assert all((ROOT / name).is_file() for name in CROSS_CUTTING_TESTS)


def test_a_test_file_astray_is_found() -> None:
    # The mirror check itself: the folder exists, the module does not; a module's aspect passes.
    assert not _mirrors_a_module(ROOT / "tests" / "unit" / "broker" / "log" / "test_no_such_module.py")
    assert not _mirrors_a_module(ROOT / "tests" / "unit" / "no_such_folder" / "test_config.py")
    assert _mirrors_a_module(ROOT / "tests" / "unit" / "broker" / "log" / "test_segment_and_indexes.py")
    assert _mirrors_a_module(ROOT / "tests" / "unit" / "cli" / "test_main.py")
