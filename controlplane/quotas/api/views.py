from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters.ownership import visible_rows_q
from controlplane.quotas import filtersets, services
from controlplane.quotas.api import serializers
from controlplane.quotas.models import ClientQuota
from controlplane.tenancy.api.viewsets import ORG_ADMIN, DestroyWithServiceMixin, ScopedReadOnlyViewSet
from controlplane.tenancy.choices import TeamRole


@extend_schema(tags=["quotas"])
class ClientQuotaViewSet(DestroyWithServiceMixin, ScopedReadOnlyViewSet):
    """Client quotas of the caller's service accounts; org admins see and set every quota of their clusters."""

    write_role = TeamRole.DEVELOPER
    action_roles = {"adopt": ORG_ADMIN}
    queryset = ClientQuota.objects.select_related("cluster", "team")
    serializer_class = serializers.ClientQuotaSerializer
    filterset_class = filtersets.ClientQuotaFilterSet
    ordering_fields = ["entity_key", "created_at"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(visible_rows_q(self.actor))

    @extend_schema(
        request=serializers.ClientQuotaInputSerializer, responses={201: serializers.ClientQuotaSerializer}
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Sets quota values for an entity (user, client id, both, or defaults with null names)."""
        data = self.validated_input(serializers.ClientQuotaInputSerializer)
        quota = services.set_quota(actor=self.actor, **data)
        return self.respond(quota, status.HTTP_201_CREATED)

    @extend_schema(
        request=serializers.ClientQuotaUpdateInputSerializer, responses=serializers.ClientQuotaSerializer
    )
    def partial_update(self, request: Request, *args: object, **kwargs: object) -> Response:
        quota = self.get_object()
        data = self.validated_input(serializers.ClientQuotaUpdateInputSerializer)
        return self.respond(
            services.set_quota(actor=self.actor, cluster=quota.cluster, entity=quota.entity, **data)
        )

    @extend_schema(request=None, responses=serializers.ClientQuotaSerializer)
    @action(detail=True, methods=["post"])
    def adopt(self, request: Request, pk: str | None = None) -> Response:
        return self.respond(services.adopt_quota(actor=self.actor, quota=self.get_object()))

    def perform_destroy(self, quota: ClientQuota) -> None:
        services.delete_quota(actor=self.actor, quota=quota)
