"""Kafka principals: ``User:alice``."""

from __future__ import annotations

ANONYMOUS = "User:ANONYMOUS"
USER_TYPE = "User"


def user_principal(name: str) -> str:
    return f"{USER_TYPE}:{name}"


def principal_user(principal: str) -> str:
    """The user name of a ``User:`` principal (what client quotas call the user entity)."""
    kind, _sep, name = principal.partition(":")
    return name if kind == USER_TYPE else ""


def is_valid_principal(text: str) -> bool:
    kind, sep, name = text.partition(":")
    return bool(sep and kind and name)
