"""Where a follower truncates its log after asking its leader OffsetForLeaderEpoch (Kafka's algorithm).

The follower asks about its latest epoch E. The leader answers with the largest epoch it has that is
<= E and the offset where that epoch ends in *its* log. If the leader's answer is E, everything the
follower holds past that end offset diverged and goes. If the leader only knows an older epoch, the
follower cannot tell yet how far it agrees: it truncates to where its own copy of that older epoch
ends and asks again with its now-latest epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker.log.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_OFFSET, LeaderEpochCache


@dataclass(frozen=True, slots=True)
class TruncationDecision:
    offset: int  # truncate the log to this offset (a no-op when it is the log end)
    complete: bool  # False: ask the leader again once truncated


def decide_truncation(
    epochs: LeaderEpochCache,
    *,
    log_end_offset: int,
    high_watermark: int,
    leader_epoch: int,
    leader_end_offset: int,
) -> TruncationDecision:
    """The leader answered (`leader_epoch`, `leader_end_offset`) about our latest epoch."""
    if leader_end_offset == UNDEFINED_OFFSET:
        # The leader has no epoch at or below ours (or we sent none): keep only what was committed.
        return TruncationDecision(min(high_watermark, log_end_offset), True)
    if leader_epoch == UNDEFINED_EPOCH:
        return TruncationDecision(min(leader_end_offset, log_end_offset), True)
    local_epoch, local_end = epochs.end_offset_for(leader_epoch, log_end_offset)
    if local_epoch == leader_epoch:
        return TruncationDecision(min(leader_end_offset, local_end, log_end_offset), True)
    if local_end == UNDEFINED_OFFSET:
        # We know no epoch at or below the leader's: nothing of ours can be trusted past the HWM.
        return TruncationDecision(min(high_watermark, leader_end_offset, log_end_offset), True)
    return TruncationDecision(min(local_end, log_end_offset), False)
