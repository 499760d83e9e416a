from django.apps import AppConfig


class LagConfig(AppConfig):
    """Consumer lag: sampling, history, time lag, health per group, the lag API and Prometheus metrics."""

    name = "controlplane.lag"
    label = "lag"
    verbose_name = "Consumer lag"
