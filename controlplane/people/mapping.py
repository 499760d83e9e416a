"""Mapping rules of single sign-on: which claim values give which organization, team and role.

Pure data (no Django models): settings parse the rules at start-up, so a wrong rule stops the process with
a message instead of silently granting nothing (or too much) at the next sign-in.

A rule, in the JSON list of `OIDC_MAPPING_RULES`:

    {"claim": "groups", "value": "kafka-payments-dev", "organization": "acme", "team": "payments",
     "role": "developer"}
    {"value": "kafka-admins", "organization": "acme", "org_admin": true}

`claim` is a dotted path into the ID token and userinfo claims (`realm_access.roles`,
`resource_access.streamhub.roles`); it defaults to `OIDC_GROUPS_CLAIM`. A rule matches when the claim is
the value or a list holding it. A matching rule makes the person a member of `organization` (its name or
slug), an org admin with `org_admin`, and a member of `team` (a team name or slug in that organization)
with `role` (default `viewer`). Several matching rules for one team give the highest role.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ROLES = ("viewer", "developer", "team_admin")
_RULE_KEYS = {"claim", "value", "organization", "team", "role", "org_admin"}


@dataclass(frozen=True)
class MappingRule:
    claim: str
    value: str
    organization: str
    team: str = ""
    role: str = "viewer"
    org_admin: bool = False


def parse_mapping_rules(text: str, *, default_claim: str) -> list[MappingRule]:
    """Reads the JSON list of rules; raises ValueError naming the rule that is wrong."""
    try:
        raw = json.loads(text or "[]")
    except ValueError as error:
        raise ValueError(f"OIDC_MAPPING_RULES is not JSON: {error}") from None
    if not isinstance(raw, list):
        raise ValueError("OIDC_MAPPING_RULES must be a JSON list of rules")
    rules = []
    for number, item in enumerate(raw, start=1):
        where = f"OIDC_MAPPING_RULES rule {number}"
        if not isinstance(item, dict):
            raise ValueError(f"{where} is not an object")
        unknown = set(item) - _RULE_KEYS
        if unknown:
            raise ValueError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
        for key in ("value", "organization"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise ValueError(f"{where} needs a non-empty string {key!r}")
        role = item.get("role", "viewer")
        if role not in ROLES:
            raise ValueError(f"{where}: role must be one of {', '.join(ROLES)}")
        if not isinstance(item.get("team", ""), str) or not isinstance(item.get("org_admin", False), bool):
            raise ValueError(f"{where}: team must be a string and org_admin true or false")
        claim = item.get("claim") or default_claim
        if not isinstance(claim, str):
            raise ValueError(f"{where}: claim must be a dotted path string")
        rules.append(
            MappingRule(
                claim=claim,
                value=item["value"],
                organization=item["organization"],
                team=item.get("team", ""),
                role=role,
                org_admin=item.get("org_admin", False),
            )
        )
    return rules


def claim_values(claims: dict[str, Any], path: str) -> list[str]:
    """The values at a dotted claim path as strings: a list's items, or the single value."""
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return []
        value = value[part]
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, str | int)]
    if isinstance(value, str | int) and not isinstance(value, bool):
        return [str(value)]
    return []


def matching_rules(rules: list[MappingRule], claims: dict[str, Any]) -> list[MappingRule]:
    return [rule for rule in rules if rule.value in claim_values(claims, rule.claim)]
