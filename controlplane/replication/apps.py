from django.apps import AppConfig


class ReplicationConfig(AppConfig):
    name = "controlplane.replication"
    label = "replication"
    verbose_name = "Replication flows (MirrorMaker 2)"

    def ready(self) -> None:
        # Each lag sampling run of a flow's target cluster samples the flow's lag and judges its alerts.
        from controlplane.lag.signals import sampling_run_finished
        from controlplane.replication.alerting import sample_and_evaluate_flows

        sampling_run_finished.connect(sample_and_evaluate_flows, dispatch_uid="replication.sample_flow_lag")
