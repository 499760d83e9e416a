from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "controlplane.clusters"
    label = "clusters"
    verbose_name = "Kafka clusters"
