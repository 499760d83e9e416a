from django.apps import AppConfig


class TopicsConfig(AppConfig):
    """Topics: desired spec per team, observed state per cluster, messages."""

    name = "controlplane.topics"
    label = "topics"
    verbose_name = "Topics"
