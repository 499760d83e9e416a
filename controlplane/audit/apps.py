from django.apps import AppConfig


class AuditConfig(AppConfig):
    """The append-only record of every change: who, via what, before/after, result, when, from where."""

    name = "controlplane.audit"
    label = "audit"
    verbose_name = "Audit"
