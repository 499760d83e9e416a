"""Kafka's topic name rules."""

from __future__ import annotations

import re

MAX_TOPIC_NAME_LENGTH = 249
# The group coordinator's topic (broker.groups); the partition layer opens its logs eagerly.
OFFSETS_TOPIC_NAME = "__consumer_offsets"
_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")


def topic_name_problem(name: str | None) -> str | None:
    """Why `name` is not a legal topic name, or None when it is."""
    if not name:
        return "topic name is empty"
    if name in (".", ".."):
        return f"topic name cannot be {name!r}"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"topic name is longer than {MAX_TOPIC_NAME_LENGTH} characters"
    if not _LEGAL.match(name):
        return f"topic name {name!r} contains characters other than ASCII letters, digits, '.', '_' and '-'"
    return None


def collision_key(name: str) -> str:
    """Topics whose names differ only in '.' vs '_' collide in metric names, so Kafka forbids both."""
    return name.replace(".", "_")
