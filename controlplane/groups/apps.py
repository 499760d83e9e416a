from django.apps import AppConfig


class GroupsConfig(AppConfig):
    """Consumer groups: observed state and lag, offset resets with undo, deletion."""

    name = "controlplane.groups"
    label = "groups"
    verbose_name = "Consumer groups"
