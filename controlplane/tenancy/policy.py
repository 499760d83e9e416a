"""Checks a topic request against a team's prefixes and policy. Pure: it reads only what it is given."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from controlplane.tenancy.guardrails import Limits, effective_limits
from controlplane.tenancy.models import TeamPolicy


@dataclass(frozen=True)
class PolicyViolation:
    code: str
    field: str
    message: str


def evaluate_topic_request(
    *,
    policy: TeamPolicy,
    topic_prefixes: Iterable[str],
    name: str,
    partitions: int,
    configs: Mapping[str, str],
    existing_partitions: int = 0,
    replication_factor: int | None = None,
    organization_limits: Mapping[str, int | None] | None = None,
) -> list[PolicyViolation]:
    """Every way the request breaks the rules, so the caller can explain all of them at once."""
    limits = effective_limits(policy, organization_limits)
    violations: list[PolicyViolation] = []
    prefixes = list(topic_prefixes)
    if name in prefixes:
        # The prefix names the team's space, not a topic: a topic must add something after it.
        violations.append(
            PolicyViolation(
                "name_is_prefix", "name", f"{name!r} is the team's prefix itself; add a name after it."
            )
        )
    elif not any(name.startswith(prefix) for prefix in prefixes):
        owned = ", ".join(sorted(prefixes)) or "none"
        violations.append(
            PolicyViolation(
                "name_outside_prefixes", "name", f"{name!r} is outside the team's prefixes ({owned})."
            )
        )
    if policy.naming_pattern and re.fullmatch(policy.naming_pattern, name) is None:
        violations.append(
            PolicyViolation(
                "name_pattern",
                "name",
                f"{name!r} does not match the naming pattern {policy.naming_pattern!r}.",
            )
        )
    if partitions > limits.max_partitions_per_topic:
        violations.append(
            PolicyViolation(
                "too_many_partitions",
                "partitions",
                f"{partitions} partitions is more than the {limits.max_partitions_per_topic} allowed per "
                "topic; an org admin can raise the team's limit.",
            )
        )
    if existing_partitions + partitions > limits.max_total_partitions:
        violations.append(
            PolicyViolation(
                "total_partitions_exceeded",
                "partitions",
                f"The team would have {existing_partitions + partitions} partitions; "
                f"its limit is {limits.max_total_partitions}.",
            )
        )
    if replication_factor is not None and replication_factor > limits.max_replication_factor:
        violations.append(
            PolicyViolation(
                "replication_factor_too_high",
                "replication_factor",
                f"Replication factor {replication_factor} is more than the {limits.max_replication_factor} "
                "allowed.",
            )
        )
    if policy.allowed_topic_configs is not None:
        for config_name in sorted(set(configs) - set(policy.allowed_topic_configs)):
            violations.append(
                PolicyViolation(
                    "config_not_allowed", f"configs.{config_name}", f"{config_name} may not be set."
                )
            )
    violations.extend(_check_retention(limits, configs))
    violations.extend(_check_segments(limits, configs))
    return violations


def _integer_config(configs: Mapping[str, str], name: str) -> int | PolicyViolation | None:
    if name not in configs:
        return None
    try:
        return int(configs[name])
    except (TypeError, ValueError):
        return PolicyViolation("invalid_config_value", f"configs.{name}", f"{name} must be an integer.")


def _check_retention(limits: Limits, configs: Mapping[str, str]) -> list[PolicyViolation]:
    retention_ms = _integer_config(configs, "retention.ms")
    if retention_ms is None or isinstance(retention_ms, PolicyViolation):
        return [retention_ms] if retention_ms is not None else []
    # -1 keeps data forever, which no cap allows.
    if retention_ms < 0 or retention_ms > limits.max_retention_ms:
        return [
            PolicyViolation(
                "retention_too_long",
                "configs.retention.ms",
                f"retention.ms {retention_ms} exceeds the team's limit of {limits.max_retention_ms} ms.",
            )
        ]
    return []


def _check_segments(limits: Limits, configs: Mapping[str, str]) -> list[PolicyViolation]:
    violations: list[PolicyViolation] = []
    segment_bytes = _integer_config(configs, "segment.bytes")
    if isinstance(segment_bytes, PolicyViolation):
        violations.append(segment_bytes)
    elif (
        segment_bytes is not None
        and not limits.min_segment_bytes <= segment_bytes <= limits.max_segment_bytes
    ):
        violations.append(
            PolicyViolation(
                "segment_size_out_of_bounds",
                "configs.segment.bytes",
                f"segment.bytes must be between {limits.min_segment_bytes} and {limits.max_segment_bytes}.",
            )
        )
    segment_ms = _integer_config(configs, "segment.ms")
    if isinstance(segment_ms, PolicyViolation):
        violations.append(segment_ms)
    elif segment_ms is not None and segment_ms < limits.min_segment_ms:
        violations.append(
            PolicyViolation(
                "segment_time_too_short",
                "configs.segment.ms",
                f"segment.ms must be at least {limits.min_segment_ms} ms.",
            )
        )
    return violations


@dataclass(frozen=True)
class ConfigRule:
    """What a team's policy lets it set for one topic config, for an editor to show before saving."""

    allowed: bool
    minimum: int | None = None
    maximum: int | None = None
    # Why the bounds exist, in the words an editor shows next to them.
    reason: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "allowed": self.allowed,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "reason": self.reason,
        }


def topic_config_rules(
    policy: TeamPolicy | None, organization_limits: Mapping[str, int | None] | None, names: Iterable[str]
) -> dict[str, ConfigRule]:
    """The rules `evaluate_topic_request` applies to configs, per name: allowed or not, and the bounds of
    the guarded ones (retention.ms, segment.bytes, segment.ms)."""
    limits = effective_limits(policy, organization_limits)
    allowed = (
        None if policy is None or policy.allowed_topic_configs is None else set(policy.allowed_topic_configs)
    )
    bounds = {
        "retention.ms": ConfigRule(
            True, 0, limits.max_retention_ms, "The team's guardrail caps retention; unlimited is not allowed."
        ),
        "segment.bytes": ConfigRule(
            True,
            limits.min_segment_bytes,
            limits.max_segment_bytes,
            "Tiny segments mean thousands of open files; the guardrail bounds their size.",
        ),
        "segment.ms": ConfigRule(
            True,
            limits.min_segment_ms,
            None,
            "Frequent segment rolls cost the brokers; the guardrail sets a floor.",
        ),
    }
    rules: dict[str, ConfigRule] = {}
    for name in names:
        if allowed is not None and name not in allowed:
            rules[name] = ConfigRule(False, reason="The team's policy does not allow setting this config.")
        else:
            rules[name] = bounds.get(name, ConfigRule(True))
    return rules
