import platform

import pytest

from broker.runtime.allocator import tune_allocator
from controlplane.spark.allocator import keep_buffers_in_heap
from controlplane.spark.raw_reading import HEAP_MMAP_THRESHOLD, HEAP_TRIM_THRESHOLD


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt thresholds are glibc's")
def test_a_spark_worker_keeps_fetch_sized_buffers_in_the_heap() -> None:
    # Above the broker's threshold: a worker's fetch buffers are larger than a broker's request buffers.
    assert keep_buffers_in_heap(HEAP_MMAP_THRESHOLD, HEAP_TRIM_THRESHOLD) is True
    assert tune_allocator() is True  # back to the broker's, for the tests that follow in this process
