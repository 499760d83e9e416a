"""UpdateFeatures (57, v0-2) and the feature fields of ApiVersions v3+ (KIP-584).

The levels and their rules are in `broker.metadata.features`. The broker forwards the update to the active
controller of its quorum (a single node's is its own), which records it in the metadata log.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kio.schema.api_versions.v4.response import FinalizedFeatureKey, SupportedFeatureKey
from kio.schema.errors import ErrorCode
from kio.schema.update_features.v1 import response as v1
from kio.schema.update_features.v2.response import UpdateFeaturesResponse

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError
from broker.controller.rpc.admin import FeatureLevelUpdate, UpdateFeaturesRequest
from broker.metadata.features import (
    SAFE_DOWNGRADE,
    SUPPORTED,
    UPGRADE,
    FeatureUpdate,
    listed_finalized,
)
from broker.protocol.responses import NOT_THROTTLED

# Kafka's QuorumController puts this ahead of the refused feature's message (and answers no rows).
FEATURE_ERROR_PREFIX = "The update failed for all features since the following feature had an error: "


@dataclasses.dataclass(frozen=True, slots=True)
class FeatureFields:
    """SupportedFeatures, FinalizedFeaturesEpoch and FinalizedFeatures of an ApiVersions response."""

    supported_features: tuple[SupportedFeatureKey, ...]
    finalized_features_epoch: int
    finalized_features: tuple[FinalizedFeatureKey, ...]


def feature_fields(ctx: RequestContext) -> FeatureFields:
    """This broker's features, as ApiVersions v3+ answers them. v3 omits the supported features whose minimum
    is 0 (clients before KIP-1022 took 0 for "not supported")."""
    epoch, levels = ctx.broker.finalized_features()
    return FeatureFields(
        supported_features=tuple(
            SupportedFeatureKey(name=name, min_version=low, max_version=high)
            for name, (low, high) in sorted(SUPPORTED.items())
            if low > 0 or ctx.api_version >= 4
        ),
        finalized_features_epoch=epoch,
        finalized_features=tuple(
            FinalizedFeatureKey(name=name, min_version_level=level, max_version_level=level)
            for name, level in listed_finalized(levels)
        ),
    )


def _updates(ctx: RequestContext, request: Any) -> list[FeatureUpdate]:
    if ctx.api_version == 0:
        return [
            FeatureUpdate(u.feature, u.max_version_level, SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE)
            for u in request.feature_updates
        ]
    return [FeatureUpdate(u.feature, u.max_version_level, u.upgrade_type) for u in request.feature_updates]


def _answer(
    ctx: RequestContext, request: Any, error: ErrorCode, message: str | None
) -> UpdateFeaturesResponse | v1.UpdateFeaturesResponse:
    """Kafka's shapes: an error at the top with no rows; success with one NONE row per feature (v0-1:
    the rows are gone from v2, so older versions get the v1 entity, which has them)."""
    if ctx.api_version >= 2:
        return UpdateFeaturesResponse(throttle_time=NOT_THROTTLED, error_code=error, error_message=message)
    rows: tuple[v1.UpdatableFeatureResult, ...] = ()
    if error == ErrorCode.none:
        rows = tuple(
            v1.UpdatableFeatureResult(feature=u.feature, error_code=ErrorCode.none, error_message="NONE")
            for u in request.feature_updates
        )
    return v1.UpdateFeaturesResponse(
        throttle_time=NOT_THROTTLED, error_code=error, error_message=message, results=rows
    )


async def handle_update_features(
    ctx: RequestContext, request: Any
) -> UpdateFeaturesResponse | v1.UpdateFeaturesResponse:
    if not ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return _answer(ctx, request, ErrorCode.cluster_authorization_failed, "Cluster authorization failed.")
    updates = _updates(ctx, request)
    validate_only = ctx.api_version >= 1 and request.validate_only
    try:
        await ctx.broker.cluster.call(
            UpdateFeaturesRequest(
                tuple(FeatureLevelUpdate(u.feature, u.level, u.upgrade_type) for u in updates),
                validate_only,
            )
        )
    except ControllerError as exc:
        code = ErrorCode(exc.code)
        prefix = FEATURE_ERROR_PREFIX if code == ErrorCode.invalid_update_version else ""
        return _answer(ctx, request, code, prefix + exc.message if exc.message else None)
    return _answer(ctx, request, ErrorCode.none, None)
