from controlplane.core.api.filters import ApiFilterSet
from controlplane.replication.models import ReplicationFlow


class ReplicationFlowFilterSet(ApiFilterSet):
    class Meta:
        model = ReplicationFlow
        fields = ["team", "source_cluster", "target_cluster", "connect_cluster", "name", "state"]
