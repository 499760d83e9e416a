from django.apps import AppConfig


class AclsConfig(AppConfig):
    """ACL bindings on clusters, granted one by one or through templates."""

    name = "controlplane.acls"
    label = "acls"
    verbose_name = "ACLs"
