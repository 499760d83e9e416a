import platform

import pytest

from broker.wire.allocator import tune_allocator


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt thresholds are glibc's")
def test_glibc_accepts_the_request_buffer_thresholds() -> None:
    assert tune_allocator() is True


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt thresholds are glibc's")
def test_a_process_can_ask_for_its_own_thresholds() -> None:
    # The Spark topic reader keeps fetch-sized (8 MiB) buffers in the heap: above the broker's threshold.
    assert tune_allocator(16 * 1024 * 1024, 64 * 1024 * 1024) is True
    assert tune_allocator() is True  # back to the broker's, for the tests that follow in this process
