"""A broker imports the Produce handler at its first Produce (the API table loads handlers on first use):
that import stays clear of the transaction APIs' handlers, which cost ~22 ms of CPU more at that moment."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fixtures.import_contracts import REPO_ROOT

PROBE = """
import json, sys
import broker.__main__
before = set(sys.modules)
import broker.handlers.produce
print(json.dumps(sorted(name for name in set(sys.modules) - before if name.startswith("broker.handlers"))))
"""


def test_the_first_produce_imports_no_transaction_api_handlers() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert "broker.handlers.produce" in imported
    assert "broker.handlers.transactions" not in imported
