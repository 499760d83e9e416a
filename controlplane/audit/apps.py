from django.apps import AppConfig


class AuditConfig(AppConfig):
    """The append-only record of every change: who, via what, before/after, result, when, from where."""

    name = "controlplane.audit"
    label = "audit"
    verbose_name = "Audit"

    def ready(self) -> None:
        # The services announce their changes and refusals (tenancy's among them, an app below this one);
        # the audit log writes them. No service imports the audit log to be recorded.
        from controlplane.audit.services import log_change
        from controlplane.core.changes import change_recorded

        change_recorded.connect(log_change, dispatch_uid="audit.log_change")
