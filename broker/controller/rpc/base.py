"""What every controller RPC has: a request type naming its RPC and versions, a response type."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from kio.schema.errors import ErrorCode

from broker.controller.api import PartitionAssignment
from broker.controller.rpc.codec import Message

R = TypeVar("R", bound=Message)


class Request(Message, Generic[R]):
    """A request of RPC `API`, in versions MIN_VERSION..MAX_VERSION; answered by a RESPONSE."""

    __slots__ = ()
    MIN_VERSION: ClassVar[int] = 0
    MAX_VERSION: ClassVar[int] = 0
    RESPONSE: ClassVar[type[Message]]


@dataclass(frozen=True, slots=True)
class Empty(Message):
    """The answer of a write whose success is all there is to say (its error is in the reply)."""

    API = "empty"


@dataclass(frozen=True, slots=True)
class PartitionState(Message):
    """One partition as committed (broker/controller/api.py's PartitionAssignment on the wire)."""

    API = "partition_state"
    topic: str
    partition: int
    topic_id: str
    leader: int
    leader_epoch: int
    partition_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @classmethod
    def of(cls, p: PartitionAssignment) -> PartitionState:
        return cls(
            p.topic,
            p.partition,
            str(p.topic_id),
            p.leader,
            p.leader_epoch,
            p.partition_epoch,
            p.replicas,
            p.isr,
            p.adding_replicas,
            p.removing_replicas,
        )

    def assignment(self) -> PartitionAssignment:
        return PartitionAssignment(
            topic=self.topic,
            partition=self.partition,
            topic_id=uuid.UUID(self.topic_id),
            leader=self.leader,
            leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
            replicas=self.replicas,
            isr=self.isr,
            adding_replicas=self.adding_replicas,
            removing_replicas=self.removing_replicas,
        )


@dataclass(frozen=True, slots=True)
class PartitionResult(Message):
    """A per-partition outcome of an election or a reassignment."""

    API = "partition_result"
    topic: str
    partition: int
    error_code: int
    message: str | None = None


class RpcError(Exception):
    """A controller refuses a request: `code` is the Kafka error code its reply carries."""

    def __init__(self, code: ErrorCode, message: str = "") -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Reply(Generic[R]):
    """A controller's answer: `result` is set when `error_code` is 0."""

    error_code: int
    message: str
    result: R | None
    leader_id: int | None
    leader_address: tuple[str, int] | None
    term: int | None
    applied_offset: int
    # With UNSUPPORTED_VERSION: the versions the controller does speak.
    supported: tuple[int, int] | None = None

    def answer(self) -> R:
        """The result of a successful reply (RpcError otherwise)."""
        if self.error_code or self.result is None:
            raise RpcError(_error_code(self.error_code), self.message)
        return self.result


def _error_code(value: int) -> ErrorCode:
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.unknown_server_error
