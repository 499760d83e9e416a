"""Hostile lengths and counts in every API the broker serves never reach kio's native reader.

kio's reader aborts the whole process (a Rust allocation failure, not an exception) on a count
it cannot allocate, so the decoding runs in a child process: an abort fails the test instead of
killing the test run.
"""

import io
import json
import signal
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kio.index import load_request_schema
from kio.serial import entity_writer
from kio.static.primitive import Records

from broker.protocol.bounds import MAX_ARRAY_ELEMENTS, FrameBoundsError, check_request_body
from broker.protocol.frames import MalformedRequest, decode_body, decode_header
from tests.fixtures.hostile_frames import (
    minimal_request,
    request_header,
    served_request_versions,
    uvarint,
)

REPO_ROOT = Path(__file__).resolve().parents[4]

# Metadata v12 (flexible, no client id) whose topics compact array claims 4,294,967,294 elements:
# 26 bytes with its size prefix. kio asks for 8 bytes per element up front, 34 GB.
HUGE_COMPACT_ARRAY = struct.pack(">hhih", 3, 12, 1, -1) + b"\0" + b"\xff\xff\xff\xff\x0f" + b"\0" * 6


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_kio_alone_aborts_the_process_on_a_huge_compact_array_count():
    # Why the pre-pass exists: if this ever stops aborting, kio has fixed it upstream.
    child = run_child(
        f"""
        from kio.serial import entity_reader
        from kio.schema.metadata.v12.request import MetadataRequest
        frame = {HUGE_COMPACT_ARRAY!r}
        entity_reader(MetadataRequest)(frame, 11)
        """
    )
    assert child.returncode == -signal.SIGABRT, child.stderr[-2000:]
    assert len(struct.pack(">i", len(HUGE_COMPACT_ARRAY)) + HUGE_COMPACT_ARRAY) == 26


def test_a_huge_compact_array_count_is_a_malformed_request_not_an_abort():
    child = run_child(
        f"""
        from broker.protocol.frames import MalformedRequest, decode_body, decode_header
        frame = {HUGE_COMPACT_ARRAY!r}
        try:
            decode_body(decode_header(frame), frame)
        except MalformedRequest as exc:
            print("rejected:", exc)
        """
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert "rejected: api 3 v12: array count 4294967294" in child.stdout


def test_every_served_api_rejects_huge_lengths_and_truncation_without_growing():
    """Every length site of every served request version, flexible and not, and every truncation."""
    child = run_child(
        """
        import json
        from broker.protocol.frames import MalformedRequest, decode_body, decode_header
        from tests.fixtures.hostile_frames import all_hostile_frames
        counts = {"rejected": 0, "decoded": 0, "wrong": []}
        for hostile in all_hostile_frames():
            try:
                decode_body(decode_header(hostile.frame), hostile.frame)
            except MalformedRequest:
                counts["rejected"] += 1
                continue
            except Exception as exc:
                counts["wrong"].append(f"{hostile.label}: {type(exc).__name__} {exc}")
                continue
            # Only an unknown tag may be skipped over and the frame still parse.
            if " tag " not in hostile.label:
                counts["wrong"].append(f"{hostile.label}: decoded")
            counts["decoded"] += 1
        # This process's own peak (getrusage's maxrss carries a large parent's over exec, as in the suite).
        with open("/proc/self/status") as status:
            peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        counts["max_rss_mb"] = peak_kb // 1024
        print(json.dumps(counts))
        """
    )
    assert child.returncode == 0, child.stderr[-3000:]
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["wrong"] == []
    assert result["rejected"] > 5000
    assert result["max_rss_mb"] < 400


@pytest.mark.parametrize(("api_key", "version"), served_request_versions())
def test_the_minimal_body_of_every_served_request_passes_and_decodes(api_key, version):
    frame, _offset, _sites = minimal_request(api_key, version)
    decode_body(decode_header(frame), frame)


def describe_configs_v4(key_count: int) -> bytes:
    """resources[1] {type, name "a", configuration_keys[key_count] of empty strings}, no synonyms."""
    resource = b"\x02" + b"\x02a" + uvarint(key_count + 1) + b"\x01" * key_count + b"\0"
    return request_header(32, 4, True) + b"\x02" + resource + b"\0\0" + b"\0"


def test_an_array_count_the_bytes_could_hold_but_over_the_element_cap_is_refused():
    assert (
        len(
            decode_body(decode_header(frame := describe_configs_v4(10)), frame)
            .resources[0]
            .configuration_keys
        )
        == 10
    )
    frame = describe_configs_v4(MAX_ARRAY_ELEMENTS + 1)
    with pytest.raises(MalformedRequest, match="array count"):
        decode_body(decode_header(frame), frame)


def test_a_non_flexible_string_length_below_minus_one_is_refused():
    # Metadata v1: topics[1] of string length -2
    frame = request_header(3, 1, False) + struct.pack(">ih", 1, -2)
    with pytest.raises(MalformedRequest):
        decode_body(decode_header(frame), frame)


def _encode(entity) -> bytes:
    buffer = io.BytesIO()
    entity_writer(type(entity))(buffer, entity)
    return buffer.getvalue()


st.register_type_strategy(Records, st.binary(max_size=100).map(Records))


@st.composite
def served_requests(draw):
    api_key, version = draw(st.sampled_from(served_request_versions()))
    request_type = load_request_schema(api_key, version)
    return request_type, draw(st.from_type(request_type))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(served_requests())
def test_whatever_kio_encodes_passes_the_pre_pass_exactly(request):
    request_type, entity = request
    try:
        body = _encode(entity)
    except Exception:  # values kio cannot encode (out of range, null where not allowed)
        assume(False)
    check_request_body(request_type, body, 0)
    for cut in {0, len(body) // 2, len(body) - 1} & set(range(len(body))):
        with pytest.raises(FrameBoundsError):
            check_request_body(request_type, body[:cut], 0)
