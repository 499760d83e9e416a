"""Rolling upgrades back and forth under load: the long version of tests/integration/upgrade/test_rolling_upgrade.py.

    .venv/bin/python bench/rolling_upgrade.py [--rounds 3] [--stop kill9|clean|both] [--rate 300] [--keep]

A 3-node SASL cluster (RF 3, min.insync 2) starts on the release pinned in tests/fixtures/upgrade.py
(RELEASE_COMMIT, exported with `git archive`). An idempotent acks=all producer writes numbered records to 4
partitions the whole time. Each round restarts every node on this tree's code, one at a time with full ISR
in between, then every node back on the release's code (a downgrade: it holds only while the formats the
release wrote and this tree writes are the same). `--stop kill9` kills each node with SIGKILL instead of
SIGTERM; `both` alternates per restart. A topic with a config and an ACL is created after every restart
and checked at the end. Prints each restart (seconds until full ISR), then the checker's counts per partition
(acknowledged, lost, duplicated, reordered, acknowledged at another offset) and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures.broker import REPO_ROOT
from tests.fixtures.rolling_upgrade import (
    create_mid_upgrade_state,
    create_writer_topic,
    format_counts,
    mid_upgrade_state_survived,
    per_partition,
    roll,
    start_cluster_on,
    start_writer,
    stop_and_check,
    target_of,
)
from tests.fixtures.upgrade import export_release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="upgrade + downgrade rounds (default 3)")
    parser.add_argument("--stop", choices=("kill9", "clean", "both"), default="both")
    parser.add_argument("--rate", type=float, default=300.0, help="records per second (default 300)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory and print it")
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rolling-upgrade-"))
    release = export_release(work / "release")
    cluster = start_cluster_on(work / "cluster", release)
    target = target_of(cluster)
    restarts: list[dict[str, object]] = []
    labels: list[str] = []
    began = time.monotonic()
    try:
        create_writer_topic(target)
        writer = start_writer(cluster, arguments.rate)
        try:
            for round_index in range(arguments.rounds):
                for direction, code_root in (("up", REPO_ROOT), ("down", release)):
                    for node_id, node in sorted(cluster.nodes.items()):
                        hard = arguments.stop == "kill9" or (
                            arguments.stop == "both" and len(restarts) % 2 == 1
                        )
                        seconds = roll(cluster, node, code_root, hard=hard)
                        label = f"r{round_index}-{direction}-n{node_id}"
                        create_mid_upgrade_state(target, label)
                        labels.append(label)
                        restarts.append(
                            {"restart": label, "kill9": hard, "seconds_to_full_isr": round(seconds, 1)}
                        )
                        print(json.dumps(restarts[-1]), flush=True)
        finally:
            report = stop_and_check(cluster, writer)
        counts = per_partition(report, writer)
        print(format_counts(counts))
        missing = [problem for label in labels for problem in mid_upgrade_state_survived(target, label)]
        summary = {
            "rounds": arguments.rounds,
            "restarts": len(restarts),
            "kill9_restarts": sum(1 for r in restarts if r["kill9"]),
            "seconds": round(time.monotonic() - began, 1),
            "max_seconds_to_full_isr": max((float(r["seconds_to_full_isr"]) for r in restarts), default=0.0),
            "acked": report.acked,
            "lost": report.summary()["losses"],
            "duplicated": report.summary()["duplicates"],
            "reordered": report.summary()["reorderings"],
            "acked_at_another_offset": report.summary()["acked_offset_holds_other_record"],
            "gaps": report.summary()["gaps"],
            "producer_fatal": writer.fatal,
            "mid_upgrade_state_missing": missing,
            "ok": report.ok and writer.fatal is None and not missing,
        }
        print(json.dumps(summary))
    finally:
        cluster.stop()
        if arguments.keep:
            print(f"work directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
