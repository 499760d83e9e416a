"""Every controller RPC message survives encoding in each version it exists in, and decoding checks
each field against its type (broker/controller/rpc/codec.py)."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

import pytest

from broker.controller.rpc import admin, base, brokers, quorum
from broker.controller.rpc.catalog import REQUEST_TYPES
from broker.controller.rpc.codec import Message, MessageError

MESSAGE_TYPES = sorted(
    {
        value
        for module in (admin, base, brokers, quorum)
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Message) and dataclasses.is_dataclass(value)
    },
    key=lambda cls: cls.__name__,
)


def sample(tp: Any, seed: int) -> Any:
    """A value of type `tp` that differs from every field default (so a dropped field shows)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return {"record": [seed, "x"]}
    if origin is typing.Union or origin is types.UnionType:
        return sample(next(arm for arm in typing.get_args(tp) if arm is not type(None)), seed)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return (sample(args[0], seed), sample(args[0], seed + 1))
        return tuple(sample(arg, seed + i) for i, arg in enumerate(args))
    if origin is dict:
        return {f"key-{seed}": sample(typing.get_args(tp)[1], seed)}
    if isinstance(tp, type) and issubclass(tp, Message):
        hints = typing.get_type_hints(tp)
        return tp(**{f.name: sample(hints[f.name], seed + i) for i, f in enumerate(dataclasses.fields(tp))})
    if tp is bool:
        return True
    if tp is int:
        return 1000 + seed
    if tp is str:
        return f"s{seed}"
    raise AssertionError(f"no sample for {tp!r}")


def versions_of(cls: type[Message]) -> range:
    highest = max((r.MAX_VERSION for r in REQUEST_TYPES if r.API == cls.API), default=0)
    return range(highest + 1)


def test_every_rpc_has_a_request_type_with_its_response() -> None:
    assert len({r.API for r in REQUEST_TYPES}) == len(REQUEST_TYPES) == 22
    for request in REQUEST_TYPES:
        assert issubclass(request.RESPONSE, Message)
        assert request.MIN_VERSION <= request.MAX_VERSION


@pytest.mark.parametrize("cls", MESSAGE_TYPES, ids=lambda cls: cls.__name__)
def test_a_message_round_trips_through_json_in_every_version(cls: type[Message]) -> None:
    message = sample(cls, 1)
    for version in versions_of(cls):
        wire = json.loads(json.dumps(message.to_json(version)))
        decoded = cls.from_json(wire, version)
        absent = {
            f.name: f.default
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
            if not f.metadata.get("since", 0) <= version <= f.metadata.get("until", 1 << 15)
        }
        assert decoded == dataclasses.replace(message, **absent)  # type: ignore[type-var]


def test_d32902d_shapes_leave_out_what_it_left_out() -> None:
    # d32902d's readers test `"snapshot" in result`: no snapshot is no key, not null.
    assert "snapshot" not in brokers.FetchMetadataResponse(applied_offset=3).to_json(0)
    assert brokers.FetchMetadataResponse(3, (), "c25hcA==").to_json(0)["snapshot"] == "c25hcA=="
    # A fetch without entry_encoding asked for decoded records in d32902d.
    assert brokers.FetchMetadataRequest.from_json({"after_offset": 0}, 0).entry_encoding is None
    broker = quorum.ReplicaProgress(node_id=4, log_end_offset=9, last_fetch_ms=None, last_caught_up_ms=1)
    assert "directory_id" not in broker.to_json(0)


def test_a_field_exists_only_in_its_versions() -> None:
    request = brokers.FetchMetadataRequest(
        after_offset=5, broker_id=1, max_wait_ms=100, entry_encoding="base64"
    )
    assert request.to_json(0) == {
        "after_offset": 5,
        "broker_id": 1,
        "max_wait_ms": 100,
        "entry_encoding": "base64",
    }
    assert "entry_encoding" not in request.to_json(1)
    # Version 1 ignores what version 0 had (a peer sending it there is not refused).
    assert brokers.FetchMetadataRequest.from_json({"after_offset": 5, "entry_encoding": "json"}, 1) == (
        brokers.FetchMetadataRequest(after_offset=5)
    )


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"broker_id": "seven", "broker_epoch": 1, "metadata_offset": 0}, "broker_id: an integer expected"),
        ({"broker_id": True, "broker_epoch": 1, "metadata_offset": 0}, "broker_id: an integer expected"),
        ({"broker_id": 1, "metadata_offset": 0}, "broker_epoch is missing"),
        ({"broker_id": 1, "broker_epoch": 1, "metadata_offset": 0, "want_fence": 1}, "true or false"),
        ([1, 2], "an object expected"),
    ],
)
def test_decoding_refuses_what_the_types_do_not_allow(data: Any, problem: str) -> None:
    with pytest.raises(MessageError, match=problem):
        brokers.BrokerHeartbeatRequest.from_json(data, 0)


def test_nested_messages_and_fixed_tuples_are_checked() -> None:
    with pytest.raises(MessageError, match="4 items expected"):
        brokers.RegisterBrokerRequest.from_json(
            {"broker_id": 1, "incarnation_id": "x", "endpoints": [["PLAINTEXT", "h", 9092]]}, 0
        )
    with pytest.raises(MessageError, match=r"NewTopic\.partitions"):
        admin.CreateTopicsRequest.from_json({"topics": [{"name": "t", "partitions": "3"}]}, 0)
    changes = admin.AlterConfigsRequest.from_json(
        {"resource_type": "topic", "resource_name": "t", "changes": {"retention.ms": None}}, 0
    )
    assert changes.changes == {"retention.ms": None}
