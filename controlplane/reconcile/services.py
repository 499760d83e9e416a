"""Running a reconciliation pass on request (org admins), audited."""

from __future__ import annotations

from controlplane.clusters.models import Cluster
from controlplane.clusters.ownership import require_cluster_admin
from controlplane.core.changes import Change, audited_change
from controlplane.reconcile.models import ReconcileRun
from controlplane.reconcile.reconciler import reconcile_cluster
from controlplane.tenancy.access import Actor


def reconcile_now(*, actor: Actor, cluster: Cluster) -> ReconcileRun:
    change = Change(
        action="cluster.reconcile", resource_type="cluster", organization_id=cluster.organization_id
    )
    change.on(cluster)
    with audited_change(actor=actor, change=change):
        require_cluster_admin(actor, cluster)
    return reconcile_cluster(cluster)
