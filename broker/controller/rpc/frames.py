"""The controller RPC frames: which RPC, in which version, and the typed message inside.

A request frame is `{"t": "rpc", "id", "method", "v", "params"}`; a reply frame `{"t": "reply",
"id", "error_code", "message", "result", "leader_id", "leader_address", "term", "applied_offset"}`
(plus `"supported": [lowest, highest]` with UNSUPPORTED_VERSION). d32902d's frames are the same
without "v": they are version 0, and version 0 of every message is the shape d32902d sent, so a
node of either code answers the other during a rolling upgrade.

Only the controller listener and the controller client use this module (an import-linter
contract says so): everyone else speaks in the typed messages of broker/controller/rpc/.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from broker.controller.rpc.base import R, Reply, Request, RpcError
from broker.controller.rpc.catalog import REQUESTS
from broker.controller.rpc.codec import MessageError
from broker.raft.wire import FrameError, encode_frame


def encode_request(request_id: int, request: Request[Any], version: int) -> bytes:
    return encode_frame(
        {
            "t": "rpc",
            "id": request_id,
            "method": request.API,
            "v": version,
            "params": request.to_json(version),
        }
    )


@dataclass(frozen=True, slots=True)
class IncomingRequest:
    """A request frame as the listener read it: `request` None when it could not be decoded."""

    id: Any
    version: int
    request: Request[Any] | None
    error: RpcError | None = None
    supported: tuple[int, int] | None = None


def decode_request(frame: Mapping[str, Any]) -> IncomingRequest:
    """The typed request of an "rpc" frame, or why it cannot be answered (an unknown RPC or version,
    a malformed message): the listener answers those with the error, the connection stays open."""
    request_id = frame.get("id")
    version = frame.get("v", 0)
    method = frame.get("method")
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        return IncomingRequest(request_id, 0, None, RpcError(ErrorCode.invalid_request, "bad version"))
    request_type = REQUESTS.get(method) if isinstance(method, str) else None
    if request_type is None:
        return IncomingRequest(
            request_id, version, None, RpcError(ErrorCode.invalid_request, f"unknown method {method!r}")
        )
    supported = (request_type.MIN_VERSION, request_type.MAX_VERSION)
    if not supported[0] <= version <= supported[1]:
        refusal = RpcError(
            ErrorCode.unsupported_version,
            f"{method} version {version} is not supported (versions {supported[0]} to {supported[1]})",
        )
        return IncomingRequest(request_id, version, None, refusal, supported)
    params = frame.get("params")
    try:
        request = request_type.from_json({} if params is None else params, version)
    except MessageError as exc:
        return IncomingRequest(
            request_id, version, None, RpcError(ErrorCode.invalid_request, f"malformed request: {exc}")
        )
    return IncomingRequest(request_id, version, request)


@dataclass(frozen=True, slots=True)
class ReplyHeader:
    """What every reply says besides the answer: who leads (in which term), and how far this
    controller applied the log (a broker that forwarded a write waits for its own image to get there)."""

    leader_id: int | None
    leader_address: tuple[str, int] | None
    term: int
    applied_offset: int


def encode_reply(
    incoming: IncomingRequest, header: ReplyHeader, result: Any = None, error: RpcError | None = None
) -> bytes:
    reply: dict[str, Any] = {"t": "reply", "id": incoming.id, "error_code": 0, "message": ""}
    if error is not None:
        reply["error_code"] = error.code.value
        reply["message"] = error.message
        if incoming.supported is not None:
            reply["supported"] = list(incoming.supported)
    elif result is not None:
        reply["result"] = result.to_json(incoming.version)
    reply["leader_id"] = header.leader_id
    if header.leader_address is not None:
        reply["leader_address"] = list(header.leader_address)
    reply["term"] = header.term
    reply["applied_offset"] = header.applied_offset
    return encode_frame(reply)


def decode_reply(frame: Mapping[str, Any], request: Request[R], version: int) -> Reply[R]:
    """A reply frame to `request`; FrameError when it is not one (the connection is then dropped)."""
    try:
        error_code = frame["error_code"]
        if not isinstance(error_code, int):
            raise FrameError("a reply without an error code")
        result = None
        if not error_code:
            result = request.RESPONSE.from_json(frame.get("result") or {}, version)
        leader_id = frame.get("leader_id")
        term = frame.get("term")
        address = frame.get("leader_address")
        supported = frame.get("supported")
        return Reply(
            error_code,
            str(frame.get("message") or ""),
            result,  # type: ignore[arg-type]
            leader_id if isinstance(leader_id, int) else None,
            (str(address[0]), int(address[1])) if isinstance(address, list) and len(address) == 2 else None,
            term if isinstance(term, int) else None,
            int(frame.get("applied_offset") or 0),
            (int(supported[0]), int(supported[1]))
            if isinstance(supported, list) and len(supported) == 2
            else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise FrameError(f"malformed reply: {exc!r}") from None
