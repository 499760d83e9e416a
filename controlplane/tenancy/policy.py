"""Checks a topic request against a team's prefixes and policy. Pure: it reads only what it is given."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

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
) -> list[PolicyViolation]:
    """Every way the request breaks the rules, so the caller can explain all of them at once."""
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
    if policy.max_partitions_per_topic is not None and partitions > policy.max_partitions_per_topic:
        violations.append(
            PolicyViolation(
                "too_many_partitions",
                "partitions",
                f"{partitions} partitions is more than the {policy.max_partitions_per_topic} allowed per topic.",
            )
        )
    if (
        policy.max_total_partitions is not None
        and existing_partitions + partitions > policy.max_total_partitions
    ):
        violations.append(
            PolicyViolation(
                "total_partitions_exceeded",
                "partitions",
                f"The team would have {existing_partitions + partitions} partitions; "
                f"its limit is {policy.max_total_partitions}.",
            )
        )
    if policy.allowed_topic_configs is not None:
        for config_name in sorted(set(configs) - set(policy.allowed_topic_configs)):
            violations.append(
                PolicyViolation(
                    "config_not_allowed", f"configs.{config_name}", f"{config_name} may not be set."
                )
            )
    violations.extend(_check_retention(policy, configs))
    return violations


def _check_retention(policy: TeamPolicy, configs: Mapping[str, str]) -> list[PolicyViolation]:
    if policy.max_retention_ms is None or "retention.ms" not in configs:
        return []
    try:
        retention_ms = int(configs["retention.ms"])
    except (TypeError, ValueError):
        return [
            PolicyViolation(
                "invalid_config_value", "configs.retention.ms", "retention.ms must be an integer."
            )
        ]
    # -1 keeps data forever, which no cap allows.
    if retention_ms < 0 or retention_ms > policy.max_retention_ms:
        return [
            PolicyViolation(
                "retention_too_long",
                "configs.retention.ms",
                f"retention.ms {retention_ms} exceeds the team's limit of {policy.max_retention_ms} ms.",
            )
        ]
    return []
