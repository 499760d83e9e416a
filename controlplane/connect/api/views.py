from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.connect import filtersets, lag, services
from controlplane.connect.api import serializers
from controlplane.connect.choices import ConnectClusterStatus, ConnectorState
from controlplane.connect.models import ConnectCluster, Connector
from controlplane.core.errors import ServiceError
from controlplane.tenancy.access import visible_organization_ids
from controlplane.tenancy.api.viewsets import ORG_ADMIN, ScopedReadOnlyViewSet, document_writes
from controlplane.tenancy.choices import TeamRole


@extend_schema(tags=["connect"])
@document_writes
class ConnectClusterViewSet(mixins.CreateModelMixin, mixins.DestroyModelMixin, ScopedReadOnlyViewSet):
    """Connect clusters of the caller's organizations; org admins attach, restart and delete them."""

    queryset = ConnectCluster.objects.select_related("cluster", "organization").prefetch_related("workers")
    serializer_class = serializers.ConnectClusterSerializer
    filterset_class = filtersets.ConnectClusterFilterSet
    create_serializer_class = serializers.ConnectClusterCreateInputSerializer
    write_role = ORG_ADMIN

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(organization_id__in=visible_organization_ids(self.actor)).exclude(
            status=ConnectClusterStatus.DELETED
        )

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = self.validated_input(serializers.ConnectClusterCreateInputSerializer)
        if data["cluster"].organization_id not in visible_organization_ids(self.actor):
            raise ServiceError("No such cluster.", code="not_found")
        connect_cluster = services.attach_connect_cluster(actor=self.actor, **data)
        return self.respond(connect_cluster, status.HTTP_201_CREATED)

    def perform_destroy(self, instance: ConnectCluster) -> None:
        services.delete_connect_cluster(actor=self.actor, connect_cluster=instance)

    @action(detail=True, methods=["post"])
    def restart(self, request: Request, pk: str | None = None) -> Response:
        return self.respond(
            services.restart_connect_cluster(actor=self.actor, connect_cluster=self.get_object())
        )

    @extend_schema(responses=serializers.ConnectClusterHealthSerializer)
    @action(detail=True, methods=["get"])
    def health(self, request: Request, pk: str | None = None) -> Response:
        return Response(services.connect_cluster_health(connect_cluster=self.get_object()))

    @extend_schema(responses=serializers.ConnectorPluginSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def plugins(self, request: Request, pk: str | None = None) -> Response:
        return Response(services.plugin_catalog(connect_cluster=self.get_object()))


@extend_schema(tags=["connect"])
class ConnectorViewSet(mixins.DestroyModelMixin, ScopedReadOnlyViewSet):
    """Connectors of the caller's teams. A detail asks Connect for the status of the connector and its tasks."""

    queryset = Connector.objects.select_related("connect_cluster", "team")
    serializer_class = serializers.ConnectorSerializer
    filterset_class = filtersets.ConnectorFilterSet
    create_serializer_class = serializers.ConnectorCreateInputSerializer
    update_serializer_class = serializers.ConnectorUpdateInputSerializer
    write_role = TeamRole.DEVELOPER

    @extend_schema(
        request=serializers.ConnectorCreateInputSerializer,
        responses={201: serializers.ConnectorSerializer, 200: serializers.ValidOnlySerializer},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Creates the connector after Connect validated its config (errors per field in
        `error.details.fields`); with `validate_only` nothing is created."""
        data = self.validated_input(serializers.ConnectorCreateInputSerializer)
        if data["connect_cluster"].organization_id not in visible_organization_ids(self.actor):
            raise ServiceError("No such Connect cluster.", code="not_found")
        connector = services.create_connector(actor=self.actor, **data)
        if connector is None:
            return Response({"valid": True}, status=status.HTTP_200_OK)
        return self.respond(connector, status.HTTP_201_CREATED)

    @extend_schema(
        request=serializers.ConnectorUpdateInputSerializer, responses=serializers.ConnectorSerializer
    )
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        connector = self.get_object()
        data = self.validated_input(serializers.ConnectorUpdateInputSerializer, instance=connector)
        return self.respond(services.update_connector(actor=self.actor, connector=connector, **data))

    @extend_schema(responses=serializers.ConnectorDetailSerializer)
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        connector = self.get_object()
        context = {
            **self.get_serializer_context(),
            "status": services.connector_status(connector=connector),
            "lag": lag.connector_lag(connector),
        }
        return Response(serializers.ConnectorDetailSerializer(connector, context=context).data)

    def perform_destroy(self, instance: Connector) -> None:
        services.delete_connector(actor=self.actor, connector=instance)

    @extend_schema(request=None, responses=serializers.ConnectorSerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        connector = services.set_connector_state(
            actor=self.actor, connector=self.get_object(), state=ConnectorState.PAUSED
        )
        return self.respond(connector)

    @extend_schema(request=None, responses=serializers.ConnectorSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        connector = services.set_connector_state(
            actor=self.actor, connector=self.get_object(), state=ConnectorState.RUNNING
        )
        return self.respond(connector)

    @extend_schema(request=serializers.ConnectorRestartInputSerializer, responses={202: None})
    @action(detail=True, methods=["post"])
    def restart(self, request: Request, pk: str | None = None) -> Response:
        connector = self.get_object()
        data = self.validated_input(serializers.ConnectorRestartInputSerializer, instance=connector)
        services.restart_connector(actor=self.actor, connector=connector, **data)
        return Response(status=status.HTTP_202_ACCEPTED)
