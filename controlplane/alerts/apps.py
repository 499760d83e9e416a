from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "controlplane.alerts"
    label = "alerts"
    verbose_name = "Lag alerts"

    def ready(self) -> None:
        # Lag sampling announces each run; alerting judges it. The lag app never imports alerting.
        from controlplane.alerts.receivers import evaluate_sampling_run
        from controlplane.lag.signals import sampling_run_finished

        sampling_run_finished.connect(evaluate_sampling_run, dispatch_uid="alerts.evaluate_sampling_run")
