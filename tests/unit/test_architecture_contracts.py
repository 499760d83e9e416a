"""The import contracts of pyproject.toml (`[tool.importlinter]`) break on a deliberate violation.

`lint-imports` runs with the project's own configuration over a miniature tree with the same root
packages (broker, controlplane, console) in a temporary directory: clean it passes, and each violation
the contracts exist for makes it fail naming the broken contract.
"""

from __future__ import annotations

import subprocess
import sys
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
    "controlplane/tenancy/__init__.py": "",
    "controlplane/tenancy/access.py": "import django\n",
    "controlplane/kafka/__init__.py": "",
    "controlplane/kafka/wire.py": "from broker.wire import frames\n",
    "controlplane/clusters/__init__.py": "",
    "controlplane/clusters/connections.py": "import django\nfrom controlplane.kafka import wire\n",
    "controlplane/clusters/services.py": (
        "import celery\nfrom controlplane.clusters import connections, provisioners\n"
        "from controlplane.tenancy import access\n"
    ),
    "controlplane/clusters/provisioners/__init__.py": "from broker.wire import frames\n",
    "controlplane/clusters/workflows.py": "from controlplane.clusters import services\n",
    "controlplane/clusters/tasks.py": "from controlplane.clusters import workflows\n",
    **{
        f"controlplane/{app}/__init__.py": "from controlplane.clusters import connections\n"
        for app in ("acls", "credentials", "groups", "jobs", "lag", "quotas", "reconcile", "topics")
    },
    "controlplane/spark/__init__.py": "",
    "controlplane/spark/raw_reading.py": (
        "from broker.wire.records import errors\nfrom controlplane.kafka import wire\n"
    ),
    "controlplane/alerts/__init__.py": "from controlplane import lag\nfrom controlplane.clusters import connections\n",
    "controlplane/alerts/evaluation.py": "",
    # Resources as code sit on top of the apps whose services they call; the apps never import them back.
    **{f"controlplane/{app}/__init__.py": "" for app in ("accounts", "audit", "core", "schemas")},
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

BOUNDARY_CONTRACTS = (
    "broker-standalone",
    "broker-wire-sealed",
    "controlplane-broker-wire-only",
    "controlplane-no-console",
    "spark-source-standalone",
    "cluster-users-not-provisioning",
    "lag-alerts-seam",
    "cli-standalone",
    "declarative-on-top",
)
CLI_CONTRACT = (
    "The streamhub CLI speaks only the REST API: it imports neither Django, DRF, the control plane, the console nor "
    "the broker"
)
DECLARATIVE_CONTRACT = (
    "Resources as code sit on top of the domain apps: the apps never import controlplane.declarative"
)
SPARK_CONTRACT = (
    "The Spark source (code run in Spark executors) imports neither Django, the console nor broker internals"
)

CLUSTER_USERS_CONTRACT = (
    "The apps that act on a cluster reach it through clusters.connections, never through provisioning"
)

LAG_ALERTS_CONTRACT = "Lag sampling hands its runs to alerting through a signal, never by importing it"

# (module that gains an import, the import, the contract that must break)
VIOLATIONS = [
    (
        "broker/log/errors.py",
        "from controlplane.clusters import services",
        "The broker never imports Django, the control plane or the console",
    ),
    (
        "broker/server/app.py",
        "import django",
        "The broker never imports Django, the control plane or the console",
    ),
    (
        "broker/wire/frames.py",
        "from broker.server import app",
        "broker.wire imports nothing else of the broker",
    ),
    (
        "controlplane/clusters/services.py",
        "from broker.server import app",
        "The control plane imports the broker only through broker.wire",
    ),
    (
        "controlplane/clusters/services.py",
        "from console.celery import app",
        "The control plane never imports the Django project (console)",
    ),
    # Indirect: every app that uses clusters.connections would reach provisioning through it.
    (
        "controlplane/clusters/connections.py",
        "from controlplane.clusters import services",
        CLUSTER_USERS_CONTRACT,
    ),
    ("controlplane/lag/__init__.py", "from controlplane.clusters import tasks", CLUSTER_USERS_CONTRACT),
    ("controlplane/lag/__init__.py", "from controlplane.alerts import evaluation", LAG_ALERTS_CONTRACT),
    # Indirect: the Spark source reaches Django through a control plane app.
    ("controlplane/spark/raw_reading.py", "from controlplane.tenancy import access", SPARK_CONTRACT),
    ("controlplane/spark/raw_reading.py", "from broker.log import errors", SPARK_CONTRACT),
    ("cli/streamhub/api.py", "import django", CLI_CONTRACT),
    # Indirect: the CLI reaching the control plane through a module of its own.
    ("cli/streamhub/api.py", "from controlplane.tenancy import access", CLI_CONTRACT),
    ("controlplane/topics/__init__.py", "from controlplane import declarative", DECLARATIVE_CONTRACT),
]


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
    assert f"{contract} BROKEN" in " ".join(result.stdout.split()), result.stdout
    assert module.removesuffix(".py").removesuffix("/__init__").replace("/", ".") in result.stdout
