"""The JVM ecosystem tests at full breadth: Kafka's tools and the Java clients on one node and on the 3-node
cluster (CI runs them on the cluster only, see tests/fixtures/jvm_ecosystem.py), with Streams, Connect and
MirrorMaker 2; prints pytest's per-test durations.

    .venv/bin/python bench/jvm_ecosystem.py [pytest arguments, e.g. -k tools]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/integration/jvm",
        "-q",
        "-p",
        "no:cacheprovider",
        "--durations=0",
        *sys.argv[1:],
    ]
    environment = {**os.environ, "STREAMHUB_JVM_TARGETS": "single,cluster"}
    raise SystemExit(subprocess.run(command, cwd=REPO_ROOT, env=environment, check=False).returncode)


if __name__ == "__main__":
    main()
