"""Finalized features in the controller: a fresh cluster's first registration records the defaults,
UpdateFeatures is all-or-nothing with Kafka's refusals, and the levels survive a snapshot."""

from __future__ import annotations

import pytest
from kio.schema.errors import ErrorCode

from broker.controller.image import MetadataImage
from broker.metadata.features import (
    DEPENDENCIES,
    GROUP_VERSION,
    METADATA_VERSION,
    SAFE_DOWNGRADE,
    UNSAFE_DOWNGRADE,
    UPGRADE,
    FeatureUpdate,
    FeatureUpdateError,
    default_levels,
    plan_update,
)
from tests.unit.broker.controller.test_decisions import cluster, commit


def test_the_first_registration_finalizes_the_defaults_once() -> None:
    image, _decider = cluster(3)
    assert image.features == default_levels()
    assert image.features[METADATA_VERSION] == 29
    assert image.features[GROUP_VERSION] == 1


def test_an_update_is_recorded_and_survives_a_snapshot() -> None:
    image, decider = cluster(1)
    decision = decider.update_features(image, [FeatureUpdate(GROUP_VERSION, 0, SAFE_DOWNGRADE)], False, 1)
    commit(image, decision)
    assert image.features[GROUP_VERSION] == 0
    assert MetadataImage.from_snapshot(image.to_snapshot()).features == image.features


def test_validate_only_records_nothing_and_a_refusal_names_the_feature() -> None:
    image, decider = cluster(1)
    checked = decider.update_features(image, [FeatureUpdate(GROUP_VERSION, 0, SAFE_DOWNGRADE)], True, 1)
    assert (checked.error_code, checked.records) == (0, [])
    refused = decider.update_features(
        image,
        [FeatureUpdate(GROUP_VERSION, 0, SAFE_DOWNGRADE), FeatureUpdate(GROUP_VERSION + "x", 1)],
        False,
        2,
    )
    assert refused.error_code == ErrorCode.invalid_update_version.value
    assert refused.message == (
        "Invalid update version 1 for feature group.versionx. Local controller 2 does not support this feature."
    )
    assert refused.records == []


def test_a_dependency_is_checked_both_ways() -> None:
    # group.version 1 needs metadata.version 22 (4.0-IV0); 22 -> 21 changed nothing in the metadata format.
    assert DEPENDENCIES[GROUP_VERSION] == {1: {METADATA_VERSION: 22}}
    at_22 = {**default_levels(), METADATA_VERSION: 22, GROUP_VERSION: 0}
    with pytest.raises(FeatureUpdateError) as raised:
        plan_update({**at_22, METADATA_VERSION: 21}, [FeatureUpdate(GROUP_VERSION, 1, UPGRADE)], "n")
    assert str(raised.value) == (
        "Invalid update version 1 for feature group.version. group.version could not be set to 1 because it "
        "depends on metadata.version level 22"
    )
    with pytest.raises(
        FeatureUpdateError, match=r"group\.version could not be set to 1 because it depends on"
    ):
        plan_update({**at_22, GROUP_VERSION: 1}, [FeatureUpdate(METADATA_VERSION, 21, SAFE_DOWNGRADE)], "n")
    assert (
        plan_update(at_22, [FeatureUpdate(METADATA_VERSION, 21, SAFE_DOWNGRADE)], "n")[METADATA_VERSION] == 21
    )


@pytest.mark.parametrize(
    ("current", "target", "kind", "allowed"),
    [
        (25, 23, SAFE_DOWNGRADE, True),  # 24 and 25 did not change the metadata format
        (25, 22, SAFE_DOWNGRADE, False),  # 23 did
        (25, 22, UNSAFE_DOWNGRADE, False),  # and Kafka 4.0 does no unsafe downgrade
        (21, 25, UPGRADE, True),
        (25, 25, UPGRADE, True),
    ],
)
def test_metadata_version_downgrades_as_kafka(current: int, target: int, kind: int, allowed: bool) -> None:
    levels = {**default_levels(), METADATA_VERSION: current, GROUP_VERSION: 0}
    if allowed:
        assert (
            plan_update(levels, [FeatureUpdate(METADATA_VERSION, target, kind)], "n")[METADATA_VERSION]
            == target
        )
    else:
        with pytest.raises(FeatureUpdateError, match=rf"^Invalid metadata\.version {target}\. "):
            plan_update(levels, [FeatureUpdate(METADATA_VERSION, target, kind)], "n")


def test_a_feature_named_twice_takes_the_last_level() -> None:
    levels = plan_update(
        default_levels(),
        [FeatureUpdate(GROUP_VERSION, 5), FeatureUpdate(GROUP_VERSION, 0, SAFE_DOWNGRADE)],
        "n",
    )
    assert levels[GROUP_VERSION] == 0
