import django_filters

from controlplane.quotas.models import ClientQuota


class ClientQuotaFilterSet(django_filters.FilterSet):
    class Meta:
        model = ClientQuota
        fields = ["cluster", "team", "managed", "exists_on_cluster"]
