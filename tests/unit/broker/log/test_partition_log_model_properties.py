"""A stateful property test: the partition log behaves like a list of batches through appends,
rolls, truncations, DeleteRecords, clean restarts and crashes."""

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from broker.log.partition_log import PartitionLog

from .conftest import make_config
from .helpers import NOW_MS, batch_of, crash, read_records


class PartitionLogModel(RuleBasedStateMachine):
    @initialize(segment_bytes=st.integers(200, 3000), index_interval_bytes=st.integers(0, 500))
    def open_log(self, segment_bytes: int, index_interval_bytes: int) -> None:
        self.scratch = Path(tempfile.mkdtemp())
        self.config = make_config(segment_bytes=segment_bytes, index_interval_bytes=index_interval_bytes)
        self.log = PartitionLog.open(self.scratch / "t-0", self.config, topic="t", partition=0)
        self.batches: list[tuple[int, list[bytes]]] = []  # (base offset, values)
        self.log_start = 0
        self.end_when_empty = 0
        self.counter = 0

    def _reopen(self) -> None:
        self.log = PartitionLog.open(self.scratch / "t-0", self.config, topic="t", partition=0)

    @property
    def log_end(self) -> int:
        if not self.batches:
            return self.end_when_empty
        base, values = self.batches[-1]
        return base + len(values)

    @rule(count=st.integers(1, 5), size=st.integers(1, 300))
    def append(self, count: int, size: int) -> None:
        values = []
        for _ in range(count):
            self.counter += 1
            values.append(b"%d:" % self.counter + b"x" * size)
        result = self.log.append_as_leader(batch_of(*values), leader_epoch=0, now_ms=NOW_MS)
        assert result.base_offset == self.log_end
        self.batches.append((result.base_offset, values))
        self.log.high_watermark = self.log.log_end_offset

    @rule()
    def roll(self) -> None:
        self.log.roll(NOW_MS)

    @rule()
    def restart_cleanly(self) -> None:
        self.log.close()
        self._reopen()

    @rule()
    def restart_after_a_crash(self) -> None:
        crash(self.log)
        self._reopen()

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def truncate_at_a_batch_boundary(self, data: st.DataObject) -> None:
        # Followers truncate to offsets that leader epochs give them: batch boundaries.
        boundaries = [base for base, _ in self.batches if base >= self.log_start] + [self.log_end]
        offset = data.draw(st.sampled_from(boundaries))
        self.log.truncate_to(offset)
        self.batches = [(base, values) for base, values in self.batches if base < offset]
        self.end_when_empty = offset
        self.log_start = min(self.log_start, offset)

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def delete_records(self, data: st.DataObject) -> None:
        offset = data.draw(st.integers(self.log_start, self.log_end))
        assert self.log.delete_records_before(offset) == max(offset, self.log_start)
        self.log_start = max(offset, self.log_start)

    @invariant()
    def offsets_and_records_match_the_model(self) -> None:
        if not hasattr(self, "log"):
            return
        assert self.log.log_end_offset == self.log_end
        assert self.log.log_start_offset == self.log_start
        expected = [
            (base + i, value)
            for base, values in self.batches
            for i, value in enumerate(values)
            if base + len(values) - 1 >= self.log_start
        ]
        assert [(offset, value) for offset, _, value in read_records(self.log)] == expected

    def teardown(self) -> None:
        if hasattr(self, "log"):
            self.log.close()
            shutil.rmtree(self.scratch, ignore_errors=True)


PartitionLogModel.TestCase.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_the_partition_log_matches_a_list_of_batches = PartitionLogModel.TestCase
