import django_filters

from controlplane.declarative.models import ChangeSet, ManagedResource


class ChangeSetFilterSet(django_filters.FilterSet):
    class Meta:
        model = ChangeSet
        fields = ["file_set", "state"]


class ManagedResourceFilterSet(django_filters.FilterSet):
    class Meta:
        model = ManagedResource
        fields = ["cluster", "team", "kind", "name", "file_set", "change_set"]
