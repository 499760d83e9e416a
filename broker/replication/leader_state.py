"""What a partition leader knows about its followers: their progress, the ISR and the high watermark.

Pure bookkeeping (no I/O, no clock of its own) so that the rules can be tested on their own:

- a follower's log end offset is the offset of its latest Fetch (it has everything below it);
- a follower is *caught up* at a fetch that reaches the leader's log end, and Kafka's refinement:
  a fetch that reaches what the leader's log end was at the previous fetch proves it was caught up
  at that previous fetch;
- it is *out of sync* when it has not been caught up for `replica.lag.time.max.ms`;
- it may rejoin the ISR once its log end reaches the high watermark and the start of the leader's
  current epoch (so a rejoining replica has nothing from an older leader beyond that point);
- the high watermark is the smallest log end offset in the ISR and never moves back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

UNKNOWN_OFFSET = -1


@dataclass(slots=True)
class FollowerProgress:
    log_end_offset: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    leader_end_at_last_fetch: int = UNKNOWN_OFFSET


class LeaderState:
    """One partition led by `local_id`: ISR membership and follower progress."""

    def __init__(
        self,
        *,
        local_id: int,
        replicas: tuple[int, ...],
        isr: tuple[int, ...],
        epoch_start_offset: int,
        now_ms: int,
    ) -> None:
        self.local_id = local_id
        self.replicas = replicas
        self.isr = frozenset(isr)
        # An ISR sent to the controller and not yet answered (None: nothing pending).
        self.proposed_isr: frozenset[int] | None = None
        # Where this leader's epoch begins: a follower below it may still hold a divergent tail.
        self.epoch_start_offset = epoch_start_offset
        # A new leader gives every follower a full lag window before judging it. An empty log
        # (a new partition) has nothing to replicate: every follower has all of it, whether or not
        # it fetched yet (a broker taking 10,000 new partitions may take a while to open them all).
        known_end = 0 if epoch_start_offset == 0 else UNKNOWN_OFFSET
        self.followers = {
            replica: FollowerProgress(
                log_end_offset=known_end, last_caught_up_ms=now_ms if replica in self.isr else 0
            )
            for replica in replicas
            if replica != local_id
        }

    def record_fetch(self, replica: int, fetch_offset: int, leader_end_offset: int, now_ms: int) -> bool:
        """Note a follower's Fetch at `fetch_offset`; False when `replica` is not a follower here."""
        progress = self.followers.get(replica)
        if progress is None:
            return False
        if fetch_offset >= leader_end_offset:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, now_ms)
        elif fetch_offset >= progress.leader_end_at_last_fetch >= 0:
            progress.last_caught_up_ms = max(progress.last_caught_up_ms, progress.last_fetch_ms)
        progress.log_end_offset = fetch_offset
        progress.leader_end_at_last_fetch = leader_end_offset
        progress.last_fetch_ms = now_ms
        return True

    def log_end_offset_of(self, replica: int, local_end_offset: int) -> int:
        if replica == self.local_id:
            return local_end_offset
        progress = self.followers.get(replica)
        return UNKNOWN_OFFSET if progress is None else progress.log_end_offset

    @property
    def maximal_isr(self) -> frozenset[int]:
        """The ISR and a pending proposal together: whichever the controller commits, the high
        watermark may only cover what every member of it has."""
        return self.isr if self.proposed_isr is None else self.isr | self.proposed_isr

    def propose_isr(self, isr: tuple[int, ...] | None) -> None:
        self.proposed_isr = None if isr is None else frozenset(isr)

    def high_watermark_candidate(self, local_end_offset: int) -> int:
        """min(log end offset) over the maximal ISR; UNKNOWN_OFFSET while a member's is unknown."""
        ends = [self.log_end_offset_of(replica, local_end_offset) for replica in self.maximal_isr]
        if any(end == UNKNOWN_OFFSET for end in ends):
            return UNKNOWN_OFFSET
        return min(ends, default=local_end_offset)

    def out_of_sync(
        self,
        now_ms: int,
        lag_max_ms: int,
        local_end_offset: int = UNKNOWN_OFFSET,
        last_session_fetch_ms: Mapping[int, int] | None = None,
    ) -> frozenset[int]:
        """ISR members (never the leader) that have not caught up within `lag_max_ms`.

        With fetch sessions a caught-up follower no longer names an idle partition in its
        fetches: one whose last known log end is still the leader's log end counts as caught
        up at that follower's latest fetch (`last_session_fetch_ms`, any partition)."""
        sessions = last_session_fetch_ms or {}
        lagging = []
        for replica in self.isr:
            if replica == self.local_id:
                continue
            progress = self.followers[replica]
            caught_up = progress.last_caught_up_ms
            if progress.log_end_offset >= local_end_offset >= 0:
                caught_up = max(caught_up, sessions.get(replica, 0))
            if now_ms - caught_up > lag_max_ms:
                lagging.append(replica)
        return frozenset(lagging)

    def may_join(self, replica: int, high_watermark: int) -> bool:
        """A follower outside the ISR (judged at its own fetch) whose log reaches the high
        watermark and this epoch's start."""
        progress = self.followers.get(replica)
        return (
            progress is not None
            and replica not in self.isr
            and progress.log_end_offset >= max(high_watermark, self.epoch_start_offset)
        )

    def set_replicas(self, replicas: tuple[int, ...], now_ms: int) -> None:
        """A reassignment added or removed replicas: track fetches from the added ones (outside
        the ISR until they catch up) and forget the removed ones."""
        if replicas == self.replicas:
            return
        self.replicas = replicas
        for replica in replicas:
            if replica != self.local_id and replica not in self.followers:
                self.followers[replica] = FollowerProgress(
                    last_caught_up_ms=now_ms if replica in self.isr else 0
                )
        for replica in [r for r in self.followers if r not in replicas]:
            del self.followers[replica]

    def set_isr(self, isr: tuple[int, ...], now_ms: int) -> None:
        joined = frozenset(isr) - self.isr
        self.isr = frozenset(isr)
        for replica in joined:
            if replica in self.followers:
                self.followers[replica].last_caught_up_ms = now_ms
