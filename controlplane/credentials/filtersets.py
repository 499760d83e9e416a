from controlplane.core.api.filters import ApiFilterSet
from controlplane.credentials.models import ScramCredential


class ScramCredentialFilterSet(ApiFilterSet):
    class Meta:
        model = ScramCredential
        fields = ["service_account", "cluster", "mechanism"]
