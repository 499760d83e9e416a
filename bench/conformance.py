"""Differential conformance, long run: the corpus and many hypothesis sequences against Apache Kafka 4.2 and our
broker; prints the per-key table of the README's "Conformance with Apache Kafka" section.

    .venv/bin/python bench/conformance.py [--sequences 60] [--rounds 2] [--messages]

Starts one Apache Kafka node (tests/fixtures/apache_kafka.py) and one of our brokers set up the same way
(tests/integration/conformance/brokers.py) in a temporary directory, and stops both.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, settings

from tests.fixtures.apache_kafka import ApacheKafkaNode
from tests.integration.conformance.brokers import ConformanceBroker
from tests.integration.conformance.comparison import (
    API_NAMES,
    DIFFERENT,
    Endpoint,
    api_versions,
    common_versions,
    per_key,
    run_corpus,
    version_span,
)
from tests.integration.conformance.corpus import Names, corpus
from tests.integration.conformance.known_differences import KNOWN_DIFFERENCES
from tests.integration.conformance.normalization import ALL_NORMALIZATIONS, differences
from tests.integration.conformance.state import run_sequence, sequences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=60, help="hypothesis sequences (state comparison)")
    parser.add_argument("--rounds", type=int, default=2, help="times the whole corpus is sent")
    parser.add_argument("--messages", action="store_true", help="also list error message texts that differ")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="conformance-") as directory:
        theirs_node = ApacheKafkaNode(Path(directory) / "apache-kafka", {})
        ours_node = ConformanceBroker(Path(directory) / "ours")
        started = time.monotonic()
        theirs_node.start()
        ours_node.start()
        try:
            run(theirs_node, ours_node, args, time.monotonic() - started)
        finally:
            theirs_node.kill9()
            ours_node.kill9()


def run(
    theirs_node: ApacheKafkaNode, ours_node: ConformanceBroker, args: argparse.Namespace, startup: float
) -> None:
    ours_table, their_table = api_versions(ours_node.bootstrap), api_versions(theirs_node.bootstrap)
    common = common_versions(ours_table, their_table)
    theirs, ours = Endpoint(theirs_node.bootstrap), Endpoint(ours_node.bootstrap)
    started = time.monotonic()
    outcomes = []
    for _ in range(args.rounds):
        names = Names(uuid.uuid4().hex[:8])
        outcomes += run_corpus(corpus(names), theirs, ours, common, names.token)
    corpus_seconds = time.monotonic() - started

    state_differences: list[str] = []  # "difference — after sequence"
    examples = 0

    @settings(
        max_examples=args.sequences, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(sequence=sequences)
    def compare_state(sequence: list) -> None:
        nonlocal examples
        examples += 1
        topic = f"conf-state-{uuid.uuid4().hex[:10]}"
        for what, mine, other in run_sequence(theirs, ours, topic, sequence):
            state_differences.extend(
                f"{what}: {difference} — after {sequence}" for difference in differences(mine, other)
            )

    started = time.monotonic()
    compare_state()
    state_seconds = time.monotonic() - started

    rows = per_key(outcomes, common)
    print(f"Apache Kafka {theirs_node.installation.version} vs ours; brokers started in {startup:.1f} s")
    print(
        f"corpus: {len(outcomes)} requests x 2 brokers in {corpus_seconds:.1f} s ({args.rounds} rounds); "
        f"state: {examples} hypothesis sequences in {state_seconds:.1f} s, {len(state_differences)} differences"
    )
    print()
    print("| key | API | versions compared | requests | result | normalized | differences (why) |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        why = "; ".join(
            f"{step}: {KNOWN_DIFFERENCES.get(step, ('', 'not known yet'))[1]}" for step in row.different_steps
        )
        print(
            f"| {row.api_key} | {API_NAMES.get(row.api_key, '?')} | {version_span(row.versions)} | {row.requests} "
            f"| {row.verdict} | {', '.join(sorted(row.normalizations)) or '–'} | {why or '–'} |"
        )
    print()
    only_theirs = sorted(set(their_table) - set(ours_table))
    only_ours = sorted(set(ours_table) - set(their_table))
    print("Only Apache Kafka serves: " + ", ".join(f"{API_NAMES.get(k, k)} ({k})" for k in only_theirs))
    print("Only ours serves: " + ", ".join(f"{API_NAMES.get(k, k)} ({k})" for k in only_ours))
    wider = [
        f"{API_NAMES.get(k, k)} ({k}) ours {ours_table[k][0]}–{ours_table[k][1]}, "
        f"Kafka {their_table[k][0]}–{their_table[k][1]}"
        for k in sorted(set(ours_table) & set(their_table))
        if ours_table[k] != their_table[k]
    ]
    print("Version ranges that differ: " + "; ".join(wider))
    print()
    print("Normalizations: " + "; ".join(f"{rule.name} ({rule.why})" for rule in ALL_NORMALIZATIONS))
    totals = {
        verdict: sum(1 for row in rows if row.verdict == verdict) for verdict in {row.verdict for row in rows}
    }
    print(f"keys: {totals}")
    if state_differences:
        print("\nstate differences:")
        for line in sorted(set(state_differences))[:50]:
            print("  ", line)
    if args.messages:
        print("\nall differences:")
        for outcome in outcomes:
            if outcome.verdict == DIFFERENT:
                for difference in outcome.differences:
                    print(f"  {outcome.step.name} v{outcome.version}: {difference}")


if __name__ == "__main__":
    main()
