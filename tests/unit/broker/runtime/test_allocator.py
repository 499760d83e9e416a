import platform

import pytest

from broker.runtime.allocator import tune_allocator


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt thresholds are glibc's")
def test_glibc_accepts_the_request_buffer_thresholds() -> None:
    assert tune_allocator() is True
