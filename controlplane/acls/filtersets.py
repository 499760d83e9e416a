import django_filters

from controlplane.acls.models import AccessGrant, AclBinding


class AclBindingFilterSet(django_filters.FilterSet):
    class Meta:
        model = AclBinding
        fields = [
            "cluster",
            "team",
            "grant",
            "managed",
            "resource_type",
            "pattern_type",
            "principal",
            "operation",
        ]


class AccessGrantFilterSet(django_filters.FilterSet):
    class Meta:
        model = AccessGrant
        fields = ["cluster", "team", "service_account", "template"]
