"""One share-partition's delivery state under a share group's traffic, without sockets: records/s through
`broker.share.share_partition.SharePartition` and the share coordinator's `merge_batches`, as the broker runs them
for every ShareFetch and ShareAcknowledge (acquire, acknowledge, then the window written to `__share_group_state`).

    .venv/bin/python bench/share_partition.py [--records 200000] [--batch 100] [--members 4] [--release-every 10]

The log holds `--records` records in batches of `--batch`. Members take turns: each acquires up to 500 records
(the batch-optimized mode), accepts them except every `--release-every`-th record, which it releases (franz-go's
TestShareGroupETL does both), and every 50th turn a member leaves without acknowledging (its records come back,
as when a consumer is killed). After every acquisition and acknowledgement the window's state batches are merged
into the stored snapshot, as the share coordinator does. Prints records/s until every record is accepted, and how
many state batches the window and the snapshot held at most. Run it on two checkouts to compare them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from broker.share.persister import merge_batches
from broker.share.share_partition import (
    AcknowledgementBatch,
    AcknowledgeType,
    BatchBounds,
    SharePartition,
)

LOCK_MS = 15_000
MAX_RECORDS = 500


def run(records: int, batch: int, members: int, release_every: int) -> dict[str, float]:
    share = SharePartition(0, delivery_count_limit=5, max_in_flight=2000)
    stored: tuple[tuple[int, int, int, int], ...] = ()
    accepted = turns = 0
    widest_window = widest_snapshot = 0
    now = 0
    started = time.perf_counter()
    while share.start_offset < records:
        turns += 1
        now += 1
        member = f"m{turns % members}"
        offset = share.next_fetch_offset(now)
        first_batch = offset - offset % batch
        bounds = [
            BatchBounds(base, min(base + batch, records) - 1)
            for base in range(first_batch, min(records, first_batch + 2 * MAX_RECORDS), batch)
        ]
        acquired = share.acquire(member, bounds, MAX_RECORDS, LOCK_MS, now, whole_batches=True)
        stored = merge_batches(stored, share.state_batches(), share.start_offset)
        if turns % 50 == 0:
            share.release_member(member)
        else:
            acks = []
            for got in acquired:
                types = tuple(
                    int(AcknowledgeType.RELEASE if offset % release_every == 0 else AcknowledgeType.ACCEPT)
                    for offset in range(got.first_offset, got.last_offset + 1)
                )
                accepted += types.count(int(AcknowledgeType.ACCEPT))
                acks.append(AcknowledgementBatch(got.first_offset, got.last_offset, types))
            share.acknowledge(member, acks, LOCK_MS, now)
        window = share.state_batches()
        stored = merge_batches(stored, window, share.start_offset)
        widest_window = max(widest_window, len(window))
        widest_snapshot = max(widest_snapshot, len(stored))
    seconds = time.perf_counter() - started
    return {
        "records_per_s": round(records / seconds),
        "seconds": round(seconds, 2),
        "turns": turns,
        "widest_window_batches": widest_window,
        "widest_snapshot_batches": widest_snapshot,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--release-every", type=int, default=10)
    args = parser.parse_args()
    print(run(args.records, args.batch, args.members, args.release_every), flush=True)


if __name__ == "__main__":
    main()
