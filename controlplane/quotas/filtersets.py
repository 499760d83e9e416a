from controlplane.core.api.filters import ApiFilterSet
from controlplane.quotas.models import ClientQuota


class ClientQuotaFilterSet(ApiFilterSet):
    class Meta:
        model = ClientQuota
        fields = ["cluster", "team", "managed", "exists_on_cluster"]
