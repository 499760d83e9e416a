from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters.ownership import visible_rows_q
from controlplane.reconcile import filtersets, services
from controlplane.reconcile.api import serializers
from controlplane.reconcile.models import Drift, ReconcileRun
from controlplane.tenancy.access import org_roles
from controlplane.tenancy.api.viewsets import ORG_ADMIN, ScopedReadOnlyViewSet


@extend_schema(tags=["reconciliation"])
class DriftViewSet(ScopedReadOnlyViewSet):
    """Differences the latest reconciliation pass found: teams see their resources' drift; org admins
    also see unmanaged topics, ACLs and quotas found on their clusters."""

    queryset = Drift.objects.select_related("cluster", "team")
    serializer_class = serializers.DriftSerializer
    filterset_class = filtersets.DriftFilterSet
    ordering_fields = ["kind", "resource_name", "detected_at"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(visible_rows_q(self.actor))


@extend_schema(tags=["reconciliation"])
class ReconcileRunViewSet(ScopedReadOnlyViewSet):
    """Reconciliation passes of the clusters of organizations the caller administers; POST runs one now."""

    write_role = ORG_ADMIN
    queryset = ReconcileRun.objects.select_related("cluster")
    serializer_class = serializers.ReconcileRunSerializer
    filterset_class = filtersets.ReconcileRunFilterSet
    ordering_fields = ["started_at"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(Q(cluster__organization_id__in=list(org_roles(self.actor))))

    @extend_schema(
        request=serializers.ReconcileInputSerializer, responses={201: serializers.ReconcileRunSerializer}
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        data = self.validated_input(serializers.ReconcileInputSerializer)
        run = services.reconcile_now(actor=self.actor, **data)
        return Response(serializers.ReconcileRunSerializer(run).data, status=status.HTTP_201_CREATED)
