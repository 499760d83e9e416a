"""GetTelemetrySubscriptions (71) and PushTelemetry (72) state, as Kafka 4.0's ClientMetricsManager keeps it:
a client instance per client instance id (assigned here when a client sends the zero UUID), the
subscriptions that match it, the subscription id naming them, and when it last asked and pushed.

The instances are a bounded cache (the least recently used dropped first, as Kafka's LRU cache of 16384),
so a flood of new instance ids costs a bounded amount of memory; a dropped client that pushes again is
recreated from its request, as in Kafka.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import crc32c
from kio.schema.errors import ErrorCode
from kio.schema.get_telemetry_subscriptions.v0.response import GetTelemetrySubscriptionsResponse

from broker.telemetry.receiver import TelemetryDecodeError, TelemetryReceiver
from broker.telemetry.subscriptions import (
    ALL_METRICS,
    DEFAULT_INTERVAL_MS,
    ClientIdentity,
    Subscription,
    SubscriptionConfigError,
)
from broker.wire.records.codecs import Codec, decompress
from broker.wire.records.errors import (
    CorruptRecordError,
    DecompressedTooLargeError,
    UnsupportedCompressionError,
)

log = logging.getLogger(__name__)

MAX_CLIENT_INSTANCES = 16_384
ZERO_UUID = uuid.UUID(int=0)
# Kafka's preference order; NONE is always accepted for a push.
ACCEPTED_COMPRESSION = (Codec.ZSTD, Codec.LZ4, Codec.GZIP, Codec.SNAPPY)


@dataclass(eq=False, slots=True)
class _ClientInstance:
    identity: ClientIdentity
    subscriptions_version: int
    subscription_id: int
    requested_metrics: tuple[str, ...]
    push_interval_ms: int
    last_get_ms: float = -1.0
    last_push_ms: float = -1.0
    terminating: bool = False
    last_error: ErrorCode = ErrorCode.none

    def may_get(self, now_ms: float) -> bool:
        """A Get more than a push interval after the last Get or push (or right after an error that
        tells the client to ask again) is accepted."""
        last = max(self.last_get_ms, self.last_push_ms)
        retry = self.last_error in (ErrorCode.unknown_subscription_id, ErrorCode.unsupported_compression_type)
        if last < 0 or retry or now_ms - last >= self.push_interval_ms:
            self.last_get_ms = now_ms
            return True
        return False

    def may_push(self, now_ms: float) -> bool:
        """The first push after a Get is accepted at once (clients jitter it), later ones a push
        interval after the previous push."""
        accepted = (
            self.last_get_ms > self.last_push_ms
            or self.last_push_ms < 0
            or now_ms - self.last_push_ms >= self.push_interval_ms
        )
        if accepted:
            self.last_push_ms = now_ms
        return accepted


@dataclass(frozen=True, slots=True)
class TelemetryPush:
    """What a PushTelemetry request carries besides the client instance id."""

    subscription_id: int
    terminating: bool
    compression_type: int
    metrics: bytes


@dataclass(frozen=True, slots=True)
class PushOutcome:
    error: ErrorCode
    message: str | None = None


class ClientMetricsManager:
    def __init__(
        self,
        subscriptions: Callable[[], Mapping[str, Mapping[str, str]]],
        receiver: TelemetryReceiver,
        max_bytes: Callable[[], int],
        clock_ms: Callable[[], float] = lambda: time.monotonic() * 1000,
        max_instances: int = MAX_CLIENT_INSTANCES,
    ) -> None:
        self._max_instances = max_instances
        self._subscriptions_source = subscriptions
        self.receiver = receiver
        self._max_bytes = max_bytes
        self._clock_ms = clock_ms
        self._instances: OrderedDict[uuid.UUID, _ClientInstance] = OrderedDict()
        self._seen_configs: dict[str, dict[str, str]] | None = None
        self._subscriptions: list[Subscription] = []
        self._version = 0

    def __len__(self) -> int:
        return len(self._instances)

    @property
    def telemetry_max_bytes(self) -> int:
        return self._max_bytes()

    def _refresh_subscriptions(self) -> None:
        """Re-read the subscriptions; a change bumps the version, so every instance is matched again."""
        source = self._subscriptions_source()
        if source != self._seen_configs:
            current = {name: dict(configs) for name, configs in source.items()}
            self._seen_configs = current
            self._subscriptions = []
            for name, configs in sorted(current.items()):
                try:
                    self._subscriptions.append(Subscription.parse(name, configs))
                except SubscriptionConfigError as exc:  # checked when set; only an edited file gets here
                    log.warning("ignoring client metrics subscription %r: %s", name, exc.message)
            self._version += 1

    def _new_instance(self, identity: ClientIdentity) -> _ClientInstance:
        matching = [s for s in self._subscriptions if s.matches(identity)]
        metrics = sorted({m for s in matching for m in s.metrics})
        # "*" alone when any matching subscription asks for every metric (Kafka's answer; librdkafka
        # recognises exactly that).
        requested = (ALL_METRICS,) if ALL_METRICS in metrics else tuple(metrics)
        interval = min((s.interval_ms for s in matching), default=DEFAULT_INTERVAL_MS)
        # Changes whenever what the client must collect or how often does.
        key = f"{list(requested)}{interval}{identity.client_instance_id}".encode()
        subscription_id = int.from_bytes(crc32c.crc32c(key).to_bytes(4, "big"), "big", signed=True)
        return _ClientInstance(identity, self._version, subscription_id, requested, interval)

    def _instance(self, instance_id: uuid.UUID, identity: ClientIdentity) -> _ClientInstance:
        self._refresh_subscriptions()
        instance = self._instances.pop(instance_id, None)
        if instance is None or instance.subscriptions_version != self._version:
            fresh = self._new_instance(identity)
            if instance is not None and instance.subscription_id == fresh.subscription_id:
                fresh.last_get_ms, fresh.last_push_ms = instance.last_get_ms, instance.last_push_ms
            instance = fresh
            while len(self._instances) >= self._max_instances:
                self._instances.popitem(last=False)
        self._instances[instance_id] = instance  # most recently used last
        return instance

    def get_subscriptions(
        self, instance_id: uuid.UUID | None, identity: ClientIdentity
    ) -> GetTelemetrySubscriptionsResponse:
        """The GetTelemetrySubscriptions response."""
        if instance_id is None or instance_id == ZERO_UUID:
            instance_id = uuid.uuid4()
        identity = dataclasses.replace(identity, client_instance_id=str(instance_id))
        instance = self._instance(instance_id, identity)
        error = ErrorCode.none if instance.may_get(self._clock_ms()) else ErrorCode.throttling_quota_exceeded
        if error == ErrorCode.none:
            instance.last_error = ErrorCode.none
        return GetTelemetrySubscriptionsResponse(
            # The dispatcher sets the throttle time when a quota throttles.
            throttle_time=datetime.timedelta(0),
            error_code=error,
            client_instance_id=instance_id,
            subscription_id=instance.subscription_id,
            accepted_compression_types=tuple(int(codec) for codec in ACCEPTED_COMPRESSION),
            push_interval=datetime.timedelta(milliseconds=instance.push_interval_ms),
            telemetry_max_bytes=self.telemetry_max_bytes,
            # Cumulative counters: the receiver exports the latest value, which is what Prometheus wants.
            delta_temporality=False,
            requested_metrics=tuple(instance.requested_metrics),
        )

    def push(
        self, instance_id: uuid.UUID | None, identity: ClientIdentity, request: TelemetryPush
    ) -> PushOutcome:
        """Check a PushTelemetry as Kafka does, then hand its metrics to the receiver."""
        if instance_id is None or instance_id == ZERO_UUID:
            return PushOutcome(ErrorCode.invalid_request, "Invalid client instance id")
        identity = dataclasses.replace(identity, client_instance_id=str(instance_id))
        instance = self._instance(instance_id, identity)
        outcome = self._push(instance, identity, request)
        instance.last_error = outcome.error
        # Even a refused terminating push is the client's last (Kafka records it either way).
        instance.terminating = request.terminating
        return outcome

    def _push(
        self, instance: _ClientInstance, identity: ClientIdentity, request: TelemetryPush
    ) -> PushOutcome:
        if instance.terminating:
            return PushOutcome(
                ErrorCode.invalid_request, "The client instance sent a terminating push already"
            )
        # Kafka's order: pacing, subscription id, compression, size.
        if not instance.may_push(self._clock_ms()) and not request.terminating:
            return PushOutcome(ErrorCode.throttling_quota_exceeded, "Pushed before the push interval")
        if request.subscription_id != instance.subscription_id:
            return PushOutcome(ErrorCode.unknown_subscription_id, "Unknown subscription id")
        compression = request.compression_type
        if compression != Codec.NONE and compression not in ACCEPTED_COMPRESSION:
            return PushOutcome(ErrorCode.unsupported_compression_type, f"Compression type {compression}")
        metrics = request.metrics
        max_bytes = self.telemetry_max_bytes
        if len(metrics) > max_bytes:
            return PushOutcome(
                ErrorCode.telemetry_too_large, f"Metrics larger than telemetry.max.bytes {max_bytes}"
            )
        if not metrics:
            return PushOutcome(ErrorCode.none)
        try:
            # Decompressed, it may not be larger than telemetry.max.bytes either: a decompression bomb
            # stops there. That is TELEMETRY_TOO_LARGE (the client may retry with fewer metrics), not
            # INVALID_RECORD, which makes clients stop pushing for good.
            payload = decompress(Codec(compression), metrics, max_bytes)
        except DecompressedTooLargeError as exc:
            return PushOutcome(ErrorCode.telemetry_too_large, str(exc))
        except (CorruptRecordError, UnsupportedCompressionError) as exc:
            return PushOutcome(ErrorCode.invalid_record, str(exc))
        try:
            self.receiver.export(identity, instance.push_interval_ms, payload)
        except TelemetryDecodeError as exc:
            return PushOutcome(ErrorCode.invalid_record, str(exc))
        return PushOutcome(ErrorCode.none)
