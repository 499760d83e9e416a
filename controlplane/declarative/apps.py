from django.apps import AppConfig


class DeclarativeConfig(AppConfig):
    """Resources as code: documents that declare a team's topics, grants, quotas and service accounts; a plan
    of what applying them changes, and its application as one audited change set through the domain services."""

    name = "controlplane.declarative"
    label = "declarative"
    verbose_name = "Resources as code"
