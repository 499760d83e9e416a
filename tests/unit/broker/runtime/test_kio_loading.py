"""`python -m broker` loads kio without Hypothesis, which kio imports whenever it is installed (~175 ms of
CPU at every broker start); a process importing the broker's modules keeps kio's Hypothesis strategies."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

from tests.fixtures.import_contracts import REPO_ROOT

# What `python -m broker --help` imports: every module-level import of the entry point, then argparse exits.
BROKER_START_PROBE = """
import contextlib, io, json, runpy, sys
sys.argv = ["python -m broker", "--help"]
with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
    runpy.run_module("broker", run_name="__main__", alter_sys=True)
print(json.dumps({
    "hypothesis": sorted(name for name in sys.modules if name.split(".")[0] == "hypothesis"),
    "kio_loaded": "kio.static.primitive" in sys.modules,
    "broker_modules": sum(name.startswith("broker.") for name in sys.modules),
}))
"""

# A test process: imports the entry point's module, then draws a kio primitive through its strategy.
TEST_PROCESS_PROBE = """
import broker.__main__
from hypothesis import strategies as st
from kio.static.primitive import i16
print(st.from_type(i16).example())
"""

# After the broker's import, Hypothesis is importable again (the None entry is gone).
HIDDEN_THEN_RESTORED_PROBE = """
from broker.runtime.kio_loading import import_kio_without_hypothesis
import_kio_without_hypothesis()
import sys, kio.static._phantom as phantom
import hypothesis
print(phantom.hypothesis is None, sys.modules["hypothesis"] is not None)
"""


def run_probe(source: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", source], cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip().splitlines()[-1]


def test_hypothesis_is_installed_here_so_the_broker_start_test_can_fail() -> None:
    assert importlib.util.find_spec("hypothesis") is not None


def test_a_broker_process_starts_without_importing_hypothesis() -> None:
    found = json.loads(run_probe(BROKER_START_PROBE))
    assert found["kio_loaded"]
    assert found["broker_modules"] > 100  # the whole broker, not an entry point that exited early
    assert found["hypothesis"] == []


def test_importing_the_entry_point_module_keeps_kios_hypothesis_strategies() -> None:
    assert -(2**15) <= int(run_probe(TEST_PROCESS_PROBE)) < 2**15


def test_hypothesis_is_importable_after_kio_was_loaded_without_it() -> None:
    assert run_probe(HIDDEN_THEN_RESTORED_PROBE) == "True True"
