from controlplane.core.api.filters import ApiFilterSet
from controlplane.declarative.models import ChangeSet, ManagedResource


class ChangeSetFilterSet(ApiFilterSet):
    class Meta:
        model = ChangeSet
        fields = ["file_set", "state"]


class ManagedResourceFilterSet(ApiFilterSet):
    class Meta:
        model = ManagedResource
        fields = ["cluster", "team", "kind", "name", "file_set", "change_set"]
