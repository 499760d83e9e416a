from django.apps import AppConfig


class ReconcileConfig(AppConfig):
    """Keeps clusters and the control plane's desired state in agreement, and reports drift."""

    name = "controlplane.reconcile"
    label = "reconcile"
    verbose_name = "Reconciliation"
