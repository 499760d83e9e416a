"""Which log batches a ShareFetch answer carries (broker.handlers.share_fetch), without sockets."""

from __future__ import annotations

import random

from broker.handlers.share_fetch import _batches_holding
from broker.share.share_partition import AcquiredRange, BatchBounds


def test_the_answer_carries_exactly_the_batches_that_hold_an_acquired_record() -> None:
    """Random batch layouts and acquired ranges (a range may span batches, a batch may hold several ranges or
    none), against checking every batch against every range."""
    rng = random.Random(78)
    for _round in range(500):
        batches, offset, position = [], rng.randint(0, 5), 0
        for _ in range(rng.randint(0, 8)):
            last = offset + rng.randint(0, 6)
            batches.append((BatchBounds(offset, last), position, position + 10))
            offset, position = last + 1 + rng.randint(0, 2), position + 10
        acquired, offset = [], rng.randint(0, 10)
        for _ in range(rng.randint(0, 6)):
            last = offset + rng.randint(0, 9)
            acquired.append(AcquiredRange(offset, last, 1))
            offset = last + 1 + rng.randint(0, 8)
        expected = [
            (start, end)
            for bounds, start, end in batches
            if any(
                r.first_offset <= bounds.last_offset and r.last_offset >= bounds.base_offset for r in acquired
            )
        ]
        assert _batches_holding(batches, acquired) == expected
