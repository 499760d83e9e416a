from django.apps import AppConfig


class ConnectConfig(AppConfig):
    name = "controlplane.connect"
    label = "connect"
    verbose_name = "Kafka Connect"

    def ready(self) -> None:
        # Each lag sampling run also samples the cluster's change-data-capture connectors' source lag.
        from controlplane.connect.lag import sample_cluster_connectors
        from controlplane.lag.signals import sampling_run_finished

        sampling_run_finished.connect(sample_cluster_connectors, dispatch_uid="connect.sample_source_lag")
