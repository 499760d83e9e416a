"""Name rules shared by serializers and services."""

import re

from django.core.exceptions import ValidationError

from controlplane.tenancy.choices import PrefixResourceType

# Topic and schema-subject characters as Kafka allows them for topics; groups and transactional ids
# accept any printable character, so only whitespace and control characters are refused there.
_TOPIC_CHARS = re.compile(r"[A-Za-z0-9._-]+")
_PRINTABLE = re.compile(r"[^\s\x00-\x1f\x7f]+")
MAX_PREFIX_LENGTH = 249
# Team and organization names are read by people in lists, audit logs and menus: they start with a letter and
# hold 2-100 letters (any script), digits, spaces and . _ - & ' ( ); "0" or a hundred zeros name nothing.
_DISPLAY_NAME = re.compile(r"[^\W\d_][\w .&'()-]{1,99}")


def validate_display_name(name: str, kind: str = "team") -> None:
    if _DISPLAY_NAME.fullmatch(name) is None or name != name.strip() or "  " in name:
        raise ValidationError(
            f"A {kind} name has 2 to 100 characters and starts with a letter; it may hold letters, digits, "
            "single spaces and . _ - & ' ( )",
            code="invalid_name",
        )


def validate_prefix(resource_type: str, prefix: str) -> None:
    if not prefix or len(prefix) > MAX_PREFIX_LENGTH:
        raise ValidationError(f"A prefix has 1 to {MAX_PREFIX_LENGTH} characters.", code="invalid_prefix")
    strict = resource_type in {PrefixResourceType.TOPIC, PrefixResourceType.SUBJECT}
    pattern = _TOPIC_CHARS if strict else _PRINTABLE
    if pattern.fullmatch(prefix) is None:
        allowed = "letters, digits, '.', '_' and '-'" if strict else "printable characters without spaces"
        raise ValidationError(f"A {resource_type} prefix may contain only {allowed}.", code="invalid_prefix")


def validate_naming_pattern(pattern: str) -> None:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as error:
        raise ValidationError(f"Not a valid regular expression: {error}", code="invalid_pattern") from error


def validate_topic_config_names(names: object) -> None:
    if names is None:
        return
    if not isinstance(names, list) or not all(isinstance(name, str) and name.strip() for name in names):
        raise ValidationError("A list of topic config names is expected.", code="invalid_config_names")


def find_overlap(prefix: str, others: list[str]) -> str | None:
    """The first prefix in `others` that `prefix` overlaps: one is a prefix of the other."""
    for other in others:
        if other.startswith(prefix) or prefix.startswith(other):
            return other
    return None
