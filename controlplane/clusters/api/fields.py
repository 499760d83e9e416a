"""Serializer fields shared by the topics, ACLs, quotas and groups APIs."""

from django.db.models import QuerySet
from rest_framework import serializers

from controlplane.clusters.choices import ClusterStatus
from controlplane.clusters.models import Cluster
from controlplane.tenancy.access import visible_organization_ids


class VisibleClusterField(serializers.PrimaryKeyRelatedField):
    """A live cluster of an organization the caller belongs to; any other id does not exist."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("queryset", Cluster.objects.exclude(status=ClusterStatus.DELETED))
        super().__init__(**kwargs)

    def get_queryset(self) -> QuerySet:
        queryset = super().get_queryset()
        view = self.context.get("view")
        if view is None or getattr(view, "swagger_fake_view", False):
            return queryset.none()
        return queryset.filter(organization_id__in=visible_organization_ids(view.actor))
