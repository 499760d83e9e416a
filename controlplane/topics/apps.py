from django.apps import AppConfig


class TopicsConfig(AppConfig):
    """Topics: desired spec per team, observed state per cluster, messages."""

    name = "controlplane.topics"
    label = "topics"
    verbose_name = "Topics"

    def ready(self) -> None:
        # Registers how topic changes are confirmed on a cluster (controlplane/clusters/outcomes.py).
        from controlplane.topics import operations  # noqa: F401
