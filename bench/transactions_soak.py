"""Exactly-once under faults: consume-transform-produce on a local 3-broker cluster for minutes of faults.

    .venv/bin/python bench/transactions_soak.py [--minutes 5] [--records 60000] [--seed N] [--keep]

Starts three `broker,controller` nodes (so faults hit transaction coordinators, partition leaders and the
active controller alike), fills an input topic with `--records` records over 3 partitions, then runs the
loop of tests/integration/cluster/eos_checker.py (read_committed consumer in a group, output and offsets in
one transaction per batch of up to 50 records) while a fault injector kill -9s, SIGSTOPs and SIGTERMs one
broker at a time for `--minutes` (tests/integration/cluster/fault_checker.py). The loop carries on after
the faults end until every input record is committed (paced so the records take the fault window). Then the output is read with read_committed and
checked: one JSON summary with faults by kind, transactions, aborted transactions, new producer
instances, lost / duplicated / reordered records. Exit status 1 when any of the last three is not 0.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures.cluster import start_cluster
from tests.integration.cluster.eos_checker import EosRun, check_output, fill_source, process_all
from tests.integration.cluster.fault_checker import FaultInjector, create_topic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="minutes of fault injection")
    parser.add_argument("--records", type=int, default=60_000, help="input records to process exactly once")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the nodes' data and logs")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="transactions-soak-"))
    cluster = start_cluster(base, 3)
    ok = False
    try:
        run = EosRun(
            cluster, "soak-in", "soak-out", "soak-app", "soak-app-1", partitions=3, records=args.records
        )
        create_topic(cluster, run.source, run.partitions)
        create_topic(cluster, run.sink, run.partitions)
        fill_source(run)
        injector = FaultInjector(cluster, run.sink, seed=args.seed, log=lambda line: print(line, flush=True))
        faults = threading.Thread(target=injector.run, args=(args.minutes * 60,), daemon=True)
        started = time.monotonic()
        faults.start()
        fault_s = args.minutes * 60

        def paced(committed: int) -> None:
            # Spread the records over the fault window, so faults hit the loop all along.
            ahead = committed / run.records * fault_s - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(min(ahead, 1.0))

        process_all(run, limit_s=fault_s + 600, on_progress=paced)
        faults.join()
        lost, duplicated, reordered = check_output(run, timeout_s=120)
        ok = (lost, duplicated, reordered) == (0, 0, 0)
        summary = {
            "seconds": round(time.monotonic() - started, 1),
            "faults": dict(injector.faults),
            "records": run.records,
            "transactions": run.transactions,
            "aborted_transactions": run.aborts,
            "new_producer_instances": run.fatal,
            "lost": lost,
            "duplicated": duplicated,
            "reordered": reordered,
            "first_errors": run.errors[:5],
        }
        print(json.dumps(summary, indent=2), flush=True)
    finally:
        cluster.stop()
    if args.keep or not ok:
        print(f"node logs and data kept in {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
