"""Rate-limited logging of what clients cause: a budget per kind of line and window, a cap per connection,
and one summary of what was left out."""

import asyncio
import logging

import pytest

from broker.runtime.log_limit import ClientEventLog


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_log(clock: Clock) -> ClientEventLog:
    return ClientEventLog(
        logging.getLogger("test.client_events"),
        lines_per_window=3,
        window_s=60,
        per_connection=2,
        clock=clock,
    )


def test_a_flood_logs_its_first_lines_then_one_summary_per_window(clock, caplog) -> None:
    events = make_log(clock)
    with caplog.at_level(logging.INFO, logger="test.client_events"):
        written = [
            events.log("bad input", logging.WARNING, f"10.0.0.{n % 7}", "closing %s", n)
            for n in range(10_000)
        ]
        assert written.count(True) == 3
        clock.now += 61
        events.log("bad input", logging.WARNING, "10.0.0.1", "closing %s", "again")
    lines = [record.getMessage() for record in caplog.records]
    assert lines[:3] == ["closing 0", "closing 1", "closing 2"]
    assert lines[3] == "bad input: 9997 more like it not logged in the last 61 s, from 7 address(es)"
    assert lines[4] == "closing again"  # a new window
    assert len(lines) == 5


def test_each_kind_has_its_own_budget(clock, caplog) -> None:
    events = make_log(clock)
    with caplog.at_level(logging.INFO, logger="test.client_events"):
        for _ in range(5):
            events.log("bad input", logging.WARNING, "h", "bad")
            events.log("failed authentication", logging.INFO, "h", "auth")
    assert [r.getMessage() for r in caplog.records].count("auth") == 3


def test_a_connection_writes_at_most_its_own_share(clock, caplog) -> None:
    events = make_log(clock)
    with caplog.at_level(logging.INFO, logger="test.client_events"):
        assert events.log("bad input", logging.WARNING, "h", "one", connection_lines=0)
        assert events.log("bad input", logging.WARNING, "h", "two", connection_lines=1)
        assert not events.log("bad input", logging.WARNING, "h", "three", connection_lines=2)
        events.flush()
    assert [r.getMessage() for r in caplog.records][-1].startswith("bad input: 1 more like it not logged")


def test_the_summary_of_a_flood_that_stopped_is_written_when_its_window_ends(caplog) -> None:
    events = ClientEventLog(logging.getLogger("test.client_events"), lines_per_window=1, window_s=0.05)

    async def flood_then_wait() -> None:
        for _ in range(4):
            events.log("bad input", logging.WARNING, "h", "bad")
        await asyncio.sleep(0.3)

    with caplog.at_level(logging.INFO, logger="test.client_events"):
        asyncio.run(flood_then_wait())
    assert "bad input: 3 more like it not logged" in caplog.records[-1].getMessage()
