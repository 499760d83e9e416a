from django.apps import AppConfig


class ReplicationConfig(AppConfig):
    name = "controlplane.replication"
    label = "replication"
    verbose_name = "Replication flows (MirrorMaker 2)"
