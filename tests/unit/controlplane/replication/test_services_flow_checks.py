"""What a replication flow may match, and MirrorMaker 2's checkpoint records as the failover reads them."""

from __future__ import annotations

import struct

import pytest

from controlplane.core.errors import ServiceError
from controlplane.replication import checkpoints
from controlplane.replication.services import check_pattern

PREFIXES = ["pay-1.", "pay-2."]


@pytest.mark.parametrize(
    "pattern",
    [r"pay-1\..*", r"pay-1\.orders", r"pay-2\.(orders|refunds)-.*", r"pay-1\.[a|b].*", "pay-1\\.a\\|b"],
)
def test_patterns_inside_the_teams_prefixes_are_accepted(pattern: str) -> None:
    check_pattern(pattern, PREFIXES, "topics")


@pytest.mark.parametrize(
    "pattern",
    [
        ".*",
        r"srch\..*",
        r"pay-1\.x|.*",  # MM2 matches the whole name: the second branch matches anything
        r"pay-1\.(a)|srch.*",
        r"pay-1\.a,srch.*",  # MM2 splits its lists on commas
        r"(?:pay-1\..*)",
        r"pay-10.*",
    ],
)
def test_patterns_that_may_match_other_names_are_refused(pattern: str) -> None:
    with pytest.raises(ServiceError) as refused:
        check_pattern(pattern, PREFIXES, "topics")
    assert refused.value.code == "topics_outside_team"
    assert "topics_pattern" in refused.value.details["fields"]


def test_a_broken_pattern_and_a_team_without_prefixes_are_refused() -> None:
    with pytest.raises(ServiceError) as broken:
        check_pattern(r"pay-1\.((", PREFIXES, "topics")
    assert broken.value.code == "invalid_pattern"
    with pytest.raises(ServiceError) as none:
        check_pattern(r"pay-1\..*", [], "groups")
    assert none.value.code == "no_prefix"


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _record(group: str, topic: str, partition: int, upstream: int, downstream: int) -> tuple[bytes, bytes]:
    key = _string(group) + _string(topic) + struct.pack(">i", partition)
    return key, struct.pack(">hqq", 0, upstream, downstream) + _string("")


def test_the_newest_checkpoint_of_each_group_partition_wins_and_other_records_are_skipped() -> None:
    records = [
        _record("pay-1-billing", "dr.pay-1.orders", 0, 10, 7),
        _record("pay-1-billing", "dr.pay-1.orders", 1, 5, 5),
        (b"not a checkpoint", b"\x00"),
        (None, None),
        (_record("g", "t", 0, 1, 1)[0], struct.pack(">hqq", 1, 1, 1) + _string("")),  # an unknown version
        _record("pay-1-billing", "dr.pay-1.orders", 0, 20, 17),
    ]
    latest = checkpoints.latest(records)
    assert latest == {
        ("pay-1-billing", "dr.pay-1.orders", 0): checkpoints.Checkpoint(
            "pay-1-billing", "dr.pay-1.orders", 0, 20, 17
        ),
        ("pay-1-billing", "dr.pay-1.orders", 1): checkpoints.Checkpoint(
            "pay-1-billing", "dr.pay-1.orders", 1, 5, 5
        ),
    }
