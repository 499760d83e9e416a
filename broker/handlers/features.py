"""UpdateFeatures (57, v0-2) and the feature fields of ApiVersions v3+ (KIP-584).

The levels and their rules are in `broker.metadata.features`. A cluster member forwards the update to the
active controller, which records it in the metadata log; a single node is its own controller and keeps the
levels in its data directory.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError
from broker.metadata.features import (
    SAFE_DOWNGRADE,
    SUPPORTED,
    UPGRADE,
    FeatureUpdate,
    FeatureUpdateError,
    listed_finalized,
    plan_update,
)

UPDATE_FEATURES = 57
# Kafka's QuorumController puts this ahead of the refused feature's message (and answers no rows).
FEATURE_ERROR_PREFIX = "The update failed for all features since the following feature had an error: "


def feature_fields(ctx: RequestContext) -> dict[str, Any]:
    """SupportedFeatures, FinalizedFeaturesEpoch and FinalizedFeatures of an ApiVersions response. v3 omits
    the supported features whose minimum is 0 (clients before KIP-1022 took 0 for "not supported")."""
    epoch, levels = ctx.broker.finalized_features()
    return {
        "supported_features": [
            {"name": name, "min_version": low, "max_version": high}
            for name, (low, high) in sorted(SUPPORTED.items())
            if low > 0 or ctx.api_version >= 4
        ],
        "finalized_features_epoch": epoch,
        "finalized_features": [
            {"name": name, "min_version_level": level, "max_version_level": level}
            for name, level in listed_finalized(levels)
        ],
    }


def _updates(ctx: RequestContext, request: Any) -> list[FeatureUpdate]:
    if ctx.api_version == 0:
        return [
            FeatureUpdate(u.feature, u.max_version_level, SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE)
            for u in request.feature_updates
        ]
    return [FeatureUpdate(u.feature, u.max_version_level, u.upgrade_type) for u in request.feature_updates]


def _answer(request: Any, error: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's shapes: an error at the top with no rows; success with one NONE row per feature (v0-1)."""
    rows = []
    if error == ErrorCode.none:
        rows = [
            {"feature": u.feature, "error_code": ErrorCode.none, "error_message": "NONE"}
            for u in request.feature_updates
        ]
    return {"throttle_time": 0, "error_code": error, "error_message": message, "results": rows}


async def handle_update_features(ctx: RequestContext, request: Any) -> dict[str, Any]:
    if not ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME):
        return _answer(request, ErrorCode.cluster_authorization_failed, "Cluster authorization failed.")
    updates = _updates(ctx, request)
    validate_only = ctx.api_version >= 1 and request.validate_only
    broker = ctx.broker
    if broker.cluster is not None:
        try:
            await broker.cluster.call(
                "update_features",
                {
                    "updates": [
                        {"feature": u.feature, "level": u.level, "upgrade_type": u.upgrade_type}
                        for u in updates
                    ],
                    "validate_only": validate_only,
                },
            )
        except ControllerError as exc:
            code = ErrorCode(exc.code)
            prefix = FEATURE_ERROR_PREFIX if code == ErrorCode.invalid_update_version else ""
            return _answer(request, code, prefix + exc.message if exc.message else None)
        return _answer(request, ErrorCode.none, None)
    epoch, levels = broker.finalized_features()
    try:
        proposed = plan_update(levels, updates, f"Local controller {broker.node_id}")
    except FeatureUpdateError as exc:
        return _answer(request, ErrorCode.invalid_update_version, FEATURE_ERROR_PREFIX + str(exc))
    if validate_only or not updates:
        return _answer(request, ErrorCode.none, None)
    assert broker.feature_file is not None, "a single node keeps its features in its data directory"
    try:
        broker.feature_file.save(epoch + 1, proposed)
    except OSError as exc:
        return _answer(request, ErrorCode.kafka_storage_error, f"cannot save the finalized features: {exc}")
    broker.local_features, broker.local_features_epoch = proposed, epoch + 1
    return _answer(request, ErrorCode.none, None)


APIS = {UPDATE_FEATURES: (0, 2, handle_update_features)}
