from controlplane.acls.models import AccessGrant, AclBinding
from controlplane.core.api.filters import ApiFilterSet


class AclBindingFilterSet(ApiFilterSet):
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


class AccessGrantFilterSet(ApiFilterSet):
    class Meta:
        model = AccessGrant
        fields = ["cluster", "team", "service_account", "template"]
