"""Where a follower truncates after OffsetForLeaderEpoch (Kafka's algorithm), on real epoch caches."""

from pathlib import Path

from broker.log.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_OFFSET, LeaderEpochCache
from broker.replication.truncation import TruncationDecision, decide_truncation


def cache(directory: Path, *epochs: tuple[int, int]) -> LeaderEpochCache:
    epoch_cache = LeaderEpochCache(directory)
    for epoch, start in epochs:
        epoch_cache.assign(epoch, start)
    return epoch_cache


def decide(epochs: LeaderEpochCache, leader_epoch: int, leader_end: int, *, end: int, hwm: int = 0):
    return decide_truncation(
        epochs,
        log_end_offset=end,
        high_watermark=hwm,
        leader_epoch=leader_epoch,
        leader_end_offset=leader_end,
    )


def test_a_follower_ahead_of_the_leader_in_the_same_epoch_drops_its_tail(tmp_path: Path) -> None:
    # The follower wrote 0..14 in epoch 0; the new leader's epoch 0 ended at 10.
    epochs = cache(tmp_path, (0, 0))
    assert decide(epochs, 0, 10, end=15) == TruncationDecision(10, True)


def test_a_follower_that_agrees_with_the_leader_keeps_everything(tmp_path: Path) -> None:
    epochs = cache(tmp_path, (0, 0), (3, 40))
    assert decide(epochs, 3, 90, end=60) == TruncationDecision(60, True)


def test_the_follower_keeps_what_it_has_when_the_leaders_epoch_ends_later(tmp_path: Path) -> None:
    epochs = cache(tmp_path, (0, 0), (2, 20))
    # The leader's epoch 2 went on to 35; ours ends at our log end, 30.
    assert decide(epochs, 2, 35, end=30) == TruncationDecision(30, True)


def test_a_follower_with_an_epoch_the_leader_never_had_truncates_to_where_that_epoch_began(
    tmp_path: Path,
) -> None:
    # We led epoch 2 from offset 20 and wrote to 30; the leader only knows epoch 1 (ends at 25 there).
    epochs = cache(tmp_path, (0, 0), (1, 10), (2, 20))
    assert decide(epochs, 1, 25, end=30) == TruncationDecision(20, True)


def test_when_the_follower_lacks_the_leaders_epoch_it_truncates_and_asks_again(tmp_path: Path) -> None:
    # We have epochs 0 and 3; the leader answers epoch 2 (which we never saw), ending at 50.
    epochs = cache(tmp_path, (0, 0), (3, 30))
    decision = decide(epochs, 2, 50, end=45)
    assert decision == TruncationDecision(30, False)  # where our epoch-0 run ends


def test_an_unknown_end_offset_leaves_only_what_was_committed(tmp_path: Path) -> None:
    epochs = cache(tmp_path, (4, 100))
    assert decide(epochs, UNDEFINED_EPOCH, UNDEFINED_OFFSET, end=130, hwm=110) == TruncationDecision(
        110, True
    )


def test_an_undefined_leader_epoch_with_an_end_offset_truncates_to_that_offset(tmp_path: Path) -> None:
    epochs = cache(tmp_path, (4, 100))
    assert decide(epochs, UNDEFINED_EPOCH, 120, end=130) == TruncationDecision(120, True)


def test_the_truncation_point_is_never_beyond_the_followers_log_end(tmp_path: Path) -> None:
    epochs = cache(tmp_path, (0, 0))
    assert decide(epochs, 0, 1_000, end=5).offset == 5
