"""Finalized features (KIP-584): the cluster-wide levels of metadata.version, kraft.version,
transaction.version and group.version, and the rules UpdateFeatures changes them by.

Kafka 4.0's meaning of the levels, and what this broker does at each:
- metadata.version 7 (3.3-IV3) … 29 (4.2-IV1): the metadata log format. This broker's metadata log has one
  format, so the level is recorded and advertised (clients read it to tell the cluster's release) and
  changes nothing else here.
- kraft.version 0 (static quorum, `controller.quorum.voters`) / 1 (dynamic quorum, KIP-853: the voter set in the
  Raft log, AddRaftVoter/RemoveRaftVoter). It is decided when the controllers' storage is formatted
  (`python -m broker format --standalone | --initial-controllers`), recorded with the other defaults by a fresh
  cluster's controller, and cannot be changed by UpdateFeatures (as in Kafka 4.0).
- transaction.version 0/1 (KIP-890 part 1: server-side verification) / 2 (KIP-890 part 2: an epoch bump on
  every EndTxn, the implicit partition add by Produce v12).
- group.version 0 (classic groups only) / 1 (the KIP-848 consumer protocol: ConsumerGroupHeartbeat).
- share.version 0 (no share groups) / 1 (KIP-932 share groups: ShareGroupHeartbeat, ShareFetch, …), Kafka
  4.2's default.

The levels are kept as controller records in the metadata log (a single node's too: it is its own quorum's
only voter). A level of 0 is not listed as finalized (as Kafka: a
FeatureLevelRecord with level 0 removes the feature).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

# metadata.version's levels Kafka 4.2 knows: level -> (release name, whether the metadata format changed
# at that level). A downgrade across a level that changed it could lose metadata, so Kafka refuses it.
METADATA_VERSIONS: dict[int, tuple[str, bool]] = {
    7: ("3.3-IV3", False),
    8: ("3.4-IV0", True),
    9: ("3.5-IV0", False),
    10: ("3.5-IV1", False),
    11: ("3.5-IV2", True),
    12: ("3.6-IV0", False),
    13: ("3.6-IV1", True),
    14: ("3.6-IV2", True),
    15: ("3.7-IV0", True),
    16: ("3.7-IV1", False),
    17: ("3.7-IV2", True),
    18: ("3.7-IV3", False),
    19: ("3.7-IV4", False),
    20: ("3.8-IV0", False),
    21: ("3.9-IV0", False),
    22: ("4.0-IV0", False),
    23: ("4.0-IV1", True),
    24: ("4.0-IV2", False),
    25: ("4.0-IV3", False),
    26: ("4.1-IV0", False),
    27: ("4.1-IV1", False),
    28: ("4.2-IV0", False),
    29: ("4.2-IV1", False),
}
MINIMUM_METADATA_VERSION = min(METADATA_VERSIONS)
LATEST_METADATA_VERSION = max(METADATA_VERSIONS)

# The (min, max) levels this broker implements, advertised in ApiVersions' SupportedFeatures.
SUPPORTED: dict[str, tuple[int, int]] = {
    METADATA_VERSION: (MINIMUM_METADATA_VERSION, LATEST_METADATA_VERSION),
    KRAFT_VERSION: (0, 1),
    TRANSACTION_VERSION: (0, 2),
    GROUP_VERSION: (0, 1),
    SHARE_VERSION: (0, 1),
    STREAMS_VERSION: (0, 1),
}

# What `kafka-storage.sh format` finalizes for Kafka 4.0's default release (metadata.version 4.0-IV3):
# transaction.version 2, group.version 1, kraft.version 0 for a static quorum. A fresh cluster here takes
# the same, capped at what this broker implements (`default_levels`).
KAFKA_40_DEFAULTS: dict[str, int] = {
    METADATA_VERSION: LATEST_METADATA_VERSION,
    KRAFT_VERSION: 0,
    TRANSACTION_VERSION: 2,
    GROUP_VERSION: 1,
    # Kafka 4.2 finalizes share.version 1 by default (share groups are production-ready there).
    SHARE_VERSION: 1,
    STREAMS_VERSION: 1,
}

# Level -> the levels of other features it needs (Kafka's FeatureVersion.dependencies()).
DEPENDENCIES: dict[str, dict[int, dict[str, int]]] = {
    GROUP_VERSION: {1: {METADATA_VERSION: 22}},
    KRAFT_VERSION: {1: {METADATA_VERSION: 21}},
}

# UpdateFeatures' upgrade types (v1+; v0's allow_downgrade=true means SAFE_DOWNGRADE).
UPGRADE = 1
SAFE_DOWNGRADE = 2
UNSAFE_DOWNGRADE = 3


class FeatureUpdateError(ValueError):
    """An update Kafka refuses with INVALID_UPDATE_VERSION; the message names the feature and the reason."""


@dataclass(frozen=True, slots=True)
class FeatureUpdate:
    feature: str
    level: int
    upgrade_type: int = UPGRADE


def default_levels() -> dict[str, int]:
    """The levels a fresh cluster (or single node) finalizes."""
    return {name: min(level, SUPPORTED[name][1]) for name, level in KAFKA_40_DEFAULTS.items()}


def finalized_levels(recorded: Mapping[str, int]) -> dict[str, int]:
    """Every known feature's level: what was recorded over the defaults of a fresh cluster."""
    return {**default_levels(), **{k: v for k, v in recorded.items() if k in SUPPORTED}}


def listed_finalized(levels: Mapping[str, int]) -> list[tuple[str, int]]:
    """(name, level) of the features ApiVersions lists as finalized: level 0 ones are not."""
    return sorted((name, level) for name, level in levels.items() if level > 0)


def _invalid(feature: str, level: int, reason: str) -> FeatureUpdateError:
    return FeatureUpdateError(f"Invalid update version {level} for feature {feature}. {reason}")


def _metadata_version_problem(current: int, level: int, upgrade_type: int) -> str | None:
    """Kafka's extra checks of metadata.version (its messages start "Invalid metadata.version N.")."""
    if level not in METADATA_VERSIONS:
        return "Unknown metadata.version."
    if level < MINIMUM_METADATA_VERSION:
        return f"Unable to set a metadata.version less than {METADATA_VERSIONS[MINIMUM_METADATA_VERSION][0]}"
    if level < current:
        changed = any(METADATA_VERSIONS[v][1] for v in range(level + 1, current + 1))
        if changed and upgrade_type == UNSAFE_DOWNGRADE:
            return "Unsafe metadata downgrade is not supported in this version."
        if changed:
            return (
                "Refusing to perform the requested downgrade because it might delete metadata "
                "information. Retry using UNSAFE_DOWNGRADE if you want to force the downgrade to proceed."
            )
    return None


def _check_one(current: Mapping[str, int], update: FeatureUpdate, node: str) -> None:
    name, level, kind = update.feature, update.level, update.upgrade_type
    if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        raise _invalid(name, level, "The controller does not support the given upgrade type.")
    if level < 0:
        raise _invalid(name, level, "A feature version cannot be less than 0.")
    if name not in SUPPORTED:
        raise _invalid(name, level, f"{node} does not support this feature.")
    low, high = SUPPORTED[name]
    if not low <= level <= high:
        raise _invalid(name, level, f"{node} only supports versions {low}-{high}")
    now = current.get(name, 0)
    if level < now and kind == UPGRADE:
        raise _invalid(
            name,
            level,
            "Can't downgrade the version of this feature without setting the upgrade type to either "
            "safe or unsafe downgrade.",
        )
    if level > now and kind != UPGRADE:
        raise _invalid(name, level, "Can't downgrade to a newer version.")
    if name == KRAFT_VERSION and level != now:
        raise _invalid(
            name,
            level,
            "kraft.version is set when the controllers' storage is formatted (static or dynamic quorum) "
            "and cannot be changed by UpdateFeatures.",
        )
    if name == METADATA_VERSION:
        problem = _metadata_version_problem(now, level, kind)
        if problem:
            raise FeatureUpdateError(f"Invalid metadata.version {level}. {problem}")


def _check_dependencies(proposed: Mapping[str, int], changed: Sequence[str]) -> None:
    for name in changed:
        level = proposed[name]
        for dependency, needed in DEPENDENCIES.get(name, {}).get(level, {}).items():
            if proposed.get(dependency, 0) < needed:
                raise _invalid(
                    name,
                    level,
                    f"{name} could not be set to {level} because it depends on {dependency} level {needed}",
                )
        # A lowered feature must not leave a feature that depends on it behind.
        for other, by_level in DEPENDENCIES.items():
            needed = by_level.get(proposed.get(other, 0), {}).get(name)
            if needed is not None and level < needed:
                raise _invalid(
                    name,
                    level,
                    f"{other} could not be set to {proposed[other]} because it depends on {name} level {needed}",
                )


def plan_update(current: Mapping[str, int], updates: Sequence[FeatureUpdate], node: str) -> dict[str, int]:
    """The levels after `updates` (all or nothing), checked as Kafka's controller checks them; raises
    FeatureUpdateError naming the first feature refused. `node` names who checks ("Local controller 1")."""
    # A feature named twice: the last one counts (Kafka's controller reads the request into a map).
    latest = {update.feature: update for update in updates}
    for update in latest.values():
        _check_one(current, update, node)
    proposed = {**current, **{name: update.level for name, update in latest.items()}}
    _check_dependencies(proposed, list(latest))
    return proposed
