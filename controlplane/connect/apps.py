from django.apps import AppConfig


class ConnectConfig(AppConfig):
    name = "controlplane.connect"
    label = "connect"
    verbose_name = "Kafka Connect"
