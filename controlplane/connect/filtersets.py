from controlplane.connect.models import ConnectCluster, Connector
from controlplane.core.api.filters import ApiFilterSet


class ConnectClusterFilterSet(ApiFilterSet):
    class Meta:
        model = ConnectCluster
        fields = ["organization", "cluster", "name"]


class ConnectorFilterSet(ApiFilterSet):
    class Meta:
        model = Connector
        fields = ["connect_cluster", "team", "name"]
