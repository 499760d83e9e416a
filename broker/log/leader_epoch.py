"""Leader epoch cache: (epoch, start offset) pairs, persisted as Kafka's `leader-epoch-checkpoint`."""

import os
from bisect import bisect_left, bisect_right
from pathlib import Path

from kio.schema.errors import ErrorCode

UNDEFINED_EPOCH = -1
UNDEFINED_OFFSET = -1
CHECKPOINT_NAME = "leader-epoch-checkpoint"


def leader_epoch_error(requested: int, current: int) -> ErrorCode:
    """Kafka's fencing rule: a client with an older epoch is fenced, a newer one is ahead of us."""
    if requested == -1 or requested == current:
        return ErrorCode.none
    if requested < current:
        return ErrorCode.fenced_leader_epoch
    return ErrorCode.unknown_leader_epoch


class LeaderEpochCache:
    def __init__(self, directory: Path, *, load: bool = True) -> None:
        """`load=False`: a new partition's directory, which has no checkpoint to read yet."""
        self.path = directory / CHECKPOINT_NAME
        self.epochs: list[int] = []
        self.start_offsets: list[int] = []
        if load:
            self._load()

    def _load(self) -> None:
        try:
            lines = self.path.read_text().split("\n")
            count = int(lines[1])
            pairs = [tuple(int(part) for part in line.split()) for line in lines[2 : 2 + count]]
        except (FileNotFoundError, ValueError, IndexError):
            return  # missing or torn: the epochs are rebuilt as new leader epochs arrive
        for epoch, start_offset in pairs:
            if (not self.epochs or epoch > self.epochs[-1]) and (
                not self.start_offsets or start_offset >= self.start_offsets[-1]
            ):
                self.epochs.append(epoch)
                self.start_offsets.append(start_offset)

    def _write(self) -> None:
        body = "0\n{}\n{}".format(
            len(self.epochs),
            "".join(f"{e} {o}\n" for e, o in zip(self.epochs, self.start_offsets, strict=True)),
        )
        temporary = self.path.with_name(CHECKPOINT_NAME + ".tmp")
        temporary.write_text(body)
        os.replace(temporary, self.path)

    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1] if self.epochs else UNDEFINED_EPOCH

    def copy_from(self, other: "LeaderEpochCache") -> None:
        """Take `other`'s entries (a copy of the same log, which may know epochs no batch carries yet)."""
        self.epochs = list(other.epochs)
        self.start_offsets = list(other.start_offsets)
        self._write()

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` starts at `start_offset` (only a newer epoch is recorded)."""
        if epoch < 0 or (self.epochs and epoch <= self.epochs[-1]):
            return
        # A newer epoch cannot start before an older one's entries: drop those that conflict.
        while self.start_offsets and self.start_offsets[-1] > start_offset:
            self.epochs.pop()
            self.start_offsets.pop()
        self.epochs.append(epoch)
        self.start_offsets.append(start_offset)
        self._write()

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's LeaderEpochFileCache.endOffsetFor: (largest epoch <= requested, start of the next epoch)."""
        if requested_epoch == UNDEFINED_EPOCH or not self.epochs:
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        if requested_epoch == self.epochs[-1]:
            return requested_epoch, log_end_offset
        higher = bisect_right(self.epochs, requested_epoch)
        if higher == len(self.epochs):
            return UNDEFINED_EPOCH, UNDEFINED_OFFSET
        floor = higher - 1
        if floor < 0:
            return requested_epoch, self.start_offsets[higher]
        return self.epochs[floor], self.start_offsets[higher]

    def truncate_from_end(self, end_offset: int) -> None:
        """Forget epochs that start at or after `end_offset` (the log was truncated there)."""
        keep = bisect_left(self.start_offsets, end_offset)
        if keep < len(self.epochs):
            del self.epochs[keep:]
            del self.start_offsets[keep:]
            self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at `start_offset`: the epoch covering it starts there."""
        below = bisect_right(self.start_offsets, start_offset)
        if below == 0:
            return
        if below == 1 and self.start_offsets[0] == start_offset:
            return
        del self.epochs[: below - 1]
        del self.start_offsets[: below - 1]
        self.start_offsets[0] = start_offset
        self._write()
