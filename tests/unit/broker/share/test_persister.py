"""The share coordinator's batch combining (broker.share.persister.merge_batches), on the cases Apache Kafka 4.2's
coordinator answered in tests/integration/conformance/test_share_state_rpcs.py."""

from __future__ import annotations

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
