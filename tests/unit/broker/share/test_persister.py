"""The share coordinator's batch combining (broker.share.persister.merge_batches), on the cases Apache Kafka 4.2's
coordinator answered in tests/integration/conformance/test_share_state_rpcs.py."""

from __future__ import annotations

import random

from broker.share.persister import merge_batches

AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4


def test_where_batches_overlap_the_higher_delivery_count_wins_whichever_came_first() -> None:
    stored = ((5, 7, AVAILABLE, 1), (8, 9, ACKNOWLEDGED, 1), (10, 12, ARCHIVED, 3))
    newer = ((6, 6, ACKNOWLEDGED, 2), (9, 11, AVAILABLE, 2))
    assert merge_batches(stored, newer, 5) == (
        (5, 5, AVAILABLE, 1),
        (6, 6, ACKNOWLEDGED, 2),
        (7, 7, AVAILABLE, 1),
        (8, 8, ACKNOWLEDGED, 1),
        (9, 9, AVAILABLE, 2),
        (10, 12, ARCHIVED, 3),
    )


def test_on_equal_delivery_counts_the_higher_state_wins() -> None:
    assert merge_batches(((0, 1, ACKNOWLEDGED, 1),), ((1, 2, AVAILABLE, 1),), 0) == (
        (0, 1, ACKNOWLEDGED, 1),
        (2, 2, AVAILABLE, 1),
    )


def test_nothing_below_the_start_offset_is_kept_and_equal_neighbours_join() -> None:
    stored = ((5, 9, AVAILABLE, 1),)
    assert merge_batches(stored, ((10, 11, AVAILABLE, 1),), 7) == ((7, 11, AVAILABLE, 1),)


def test_the_sweep_agrees_with_an_offset_by_offset_combination() -> None:
    """Random stored and newer batches (overlapping each other and themselves): every offset at or past the
    start offset holds the best (delivery count, state) of the batches covering it, equal neighbours joined."""
    rng = random.Random(932)
    for _round in range(300):
        batches = []
        for _ in range(rng.randint(0, 8)):
            first = rng.randint(0, 40)
            batches.append((first, first + rng.randint(0, 8), rng.choice((0, 2, 4)), rng.randint(0, 3)))
        split = rng.randint(0, len(batches))
        start = rng.randint(0, 20)
        best: dict[int, tuple[int, int]] = {}
        for first, last, state, count in batches:
            for offset in range(max(first, start), last + 1):
                best[offset] = max(best.get(offset, (-1, -1)), (count, state))
        expected: list[tuple[int, int, int, int]] = []
        for offset in sorted(best):
            count, state = best[offset]
            if expected and expected[-1][1] == offset - 1 and expected[-1][2:] == (state, count):
                expected[-1] = (expected[-1][0], offset, state, count)
            else:
                expected.append((offset, offset, state, count))
        assert merge_batches(batches[:split], batches[split:], start) == tuple(expected)
