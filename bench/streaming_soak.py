"""Soak of a managed streaming job: the acceptance test of tests/integration/spark/test_streaming_supervision.py
run for longer, with the driver killed (SIGKILL) several times while records are produced.

It is the same scenario as the suite's bounded run (a real SASL broker, PostgreSQL from DATABASE_URL, a real
Celery worker supervising spark-submit on local[1]; the first kill inside an open transaction, the others at any
moment), so the numbers come from one implementation: records expected, lost, duplicated, reordered (read_committed),
records read_uncommitted (the aborted attempts too), kills, and the batches the sink skipped after a restart
(committed before the kill).

Usage: DATABASE_URL=postgres://… .venv/bin/python bench/streaming_soak.py [--seconds 600] [--kills 5]
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST = "tests/integration/spark/test_streaming_supervision.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600, help="how long records are produced")
    parser.add_argument("--kills", type=int, default=5, help="how many times the driver is killed")
    arguments = parser.parse_args()
    # Kills spread over the run, each after the previous restart has made progress.
    interval = max(0.0, arguments.seconds / (arguments.kills + 1) - 20)
    environment = {
        **os.environ,
        "STREAMING_SOAK_SECONDS": str(arguments.seconds),
        "STREAMING_SOAK_KILLS": str(arguments.kills),
        "STREAMING_SOAK_KILL_INTERVAL": str(interval),
    }
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", TEST, "-x", "-q", "-s", "-p", "no:cacheprovider"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
    )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("streaming checker: ")]
    report = json.loads(lines[-1].removeprefix("streaming checker: ")) if lines else {}
    report.update(passed=completed.returncode == 0, wall_seconds=round(time.monotonic() - started, 1))
    report["load_average"] = os.getloadavg()
    if completed.returncode != 0:
        report["failure"] = completed.stdout[-3000:]
    print(json.dumps(report))
    return completed.returncode


if __name__ == "__main__":
    sys.exit(main())
