"""Worker liveness, kept in Redis so the web process can read what the worker wrote."""

import os
import socket
from datetime import UTC, datetime

import redis
from django.conf import settings

HEARTBEAT_KEY = "streamhub:worker:heartbeat"
HEARTBEAT_TTL_SECONDS = 180


def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)


def record_worker_heartbeat() -> None:
    _redis().set(HEARTBEAT_KEY, datetime.now(UTC).isoformat(), ex=HEARTBEAT_TTL_SECONDS)


def read_worker_heartbeat() -> datetime | None:
    """The last heartbeat time, or None when no worker reported recently or Redis is unreachable."""
    try:
        raw = _redis().get(HEARTBEAT_KEY)
    except redis.RedisError:
        return None
    return datetime.fromisoformat(raw.decode()) if raw else None


def describe_worker_echo(payload: dict) -> dict:
    return {"payload": payload, "worker_host": socket.gethostname(), "worker_pid": os.getpid()}
