"""Fault-injection soak of a local 3-broker cluster (acceptance 1 of the cluster issue).

    .venv/bin/python bench/cluster_soak.py [--minutes 5] [--rate 300] [--partitions 3] [--seed N] [--keep]

Starts three `broker,controller` nodes, then for `--minutes` of faults kill -9s, SIGSTOPs and SIGTERMs one
broker at a time (restoring it and waiting for the ISR before the next fault) while an idempotent acks=all
producer and a consumer group member run. Afterwards every partition is read from the beginning and
checked (tests/integration/cluster/fault_checker.py). Prints the fault log and one JSON summary: faults by
kind, records acknowledged, duplicates, losses, reorderings, gaps, records the consumer saw that vanished,
and the longest produce stall. Exit status 1 when the check fails. Network partitions are not injected
(they need root for network namespaces); a SIGSTOPped broker stands in for a node cut off.

Measured on the shared 2-core box (load average 11-15), two 5-minute runs at 300 records/s over 3 partitions:
43 and 47 faults (21/17 kill -9, 14/16 SIGTERM, 8/14 SIGSTOP of up to 5 s), 91,409 and 90,913 records acknowledged,
every one in the log once and in order (0 losses, duplicates, reorderings, gaps), the group member read them all and
nothing it read vanished; longest produce stall 3.1 s / 3.0 s. 1 and 2 SIGTERMs hung (the node was killed after
30 s): a replica fetcher that swallowed its cancellation keeps the broker's shutdown waiting.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures.cluster import start_cluster
from tests.integration.cluster.fault_checker import run_soak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="minutes of fault injection")
    parser.add_argument("--rate", type=float, default=300.0, help="records per second produced")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the nodes' data and logs")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="cluster-soak-"))
    cluster = start_cluster(base, 3)
    try:
        report = run_soak(
            cluster,
            args.minutes * 60,
            partitions=args.partitions,
            rate=args.rate,
            seed=args.seed,
            log=lambda line: print(line, flush=True),
        )
    finally:
        cluster.stop()
    print(json.dumps(report.summary(), indent=2))
    if args.keep or not report.ok or report.shutdown_hangs:
        print(f"node logs and data kept in {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(0 if report.ok else 1)


if __name__ == "__main__":
    main()
