from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.acls import filtersets, services
from controlplane.acls.api import serializers
from controlplane.acls.models import AccessGrant, AclBinding
from controlplane.clusters.ownership import visible_rows_q
from controlplane.kafka.acls import Acl
from controlplane.tenancy.api.viewsets import (
    ORG_ADMIN,
    CreateWithServiceMixin,
    DestroyWithServiceMixin,
    ScopedReadOnlyViewSet,
    document_writes,
)
from controlplane.tenancy.choices import TeamRole


def _visible_or_org_wide(viewset: ScopedReadOnlyViewSet, queryset: QuerySet) -> QuerySet:
    return queryset.filter(visible_rows_q(viewset.actor)).distinct()


@extend_schema(tags=["acls"])
@document_writes
class AclBindingViewSet(CreateWithServiceMixin, DestroyWithServiceMixin, ScopedReadOnlyViewSet):
    """ACL bindings in Kafka's model. Teams see and grant their own; org admins see every binding of their
    clusters, including unmanaged ones found there, and may adopt those."""

    write_role = TeamRole.DEVELOPER
    action_roles = {"adopt": ORG_ADMIN}
    queryset = AclBinding.objects.select_related("cluster", "team")
    serializer_class = serializers.AclBindingSerializer
    create_serializer_class = serializers.AclBindingCreateInputSerializer
    filterset_class = filtersets.AclBindingFilterSet
    ordering_fields = ["resource_name", "principal", "created_at"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return _visible_or_org_wide(self, queryset)

    def perform_create(self, data: dict) -> AclBinding:
        cluster, team = data.pop("cluster"), data.pop("team")
        return services.create_binding(actor=self.actor, cluster=cluster, team=team, acl=Acl(**data))

    def perform_destroy(self, binding: AclBinding) -> None:
        services.delete_binding(actor=self.actor, binding=binding)

    @extend_schema(
        request=serializers.AdoptBindingInputSerializer, responses=serializers.AclBindingSerializer
    )
    @action(detail=True, methods=["post"])
    def adopt(self, request: Request, pk: str | None = None) -> Response:
        binding = self.get_object()
        data = self.validated_input(serializers.AdoptBindingInputSerializer)
        return self.respond(services.adopt_binding(actor=self.actor, binding=binding, **data))


@extend_schema(tags=["acls"])
@document_writes
class AccessGrantViewSet(CreateWithServiceMixin, DestroyWithServiceMixin, ScopedReadOnlyViewSet):
    """Templates applied to service accounts ("producer", "consumer", "stream_app"): one call creates the
    template's bindings, deleting the grant removes them together."""

    write_role = TeamRole.DEVELOPER
    queryset = AccessGrant.objects.select_related("cluster", "team", "service_account").prefetch_related(
        "bindings"
    )
    serializer_class = serializers.AccessGrantSerializer
    create_serializer_class = serializers.AccessGrantCreateInputSerializer
    filterset_class = filtersets.AccessGrantFilterSet
    ordering_fields = ["created_at"]

    def perform_create(self, data: dict) -> AccessGrant:
        return services.apply_template(actor=self.actor, **data)

    def perform_destroy(self, grant: AccessGrant) -> None:
        services.revoke_grant(actor=self.actor, grant=grant)
