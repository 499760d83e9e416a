from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.core.api.query import takes_query
from controlplane.core.errors import ServiceError
from controlplane.replication import alerting, filtersets, services
from controlplane.replication.api import serializers
from controlplane.replication.choices import FlowState
from controlplane.replication.models import ReplicationFlow
from controlplane.tenancy.access import visible_organization_ids
from controlplane.tenancy.api.viewsets import ScopedReadOnlyViewSet
from controlplane.tenancy.choices import TeamRole


@extend_schema(tags=["replication"])
class ReplicationFlowViewSet(mixins.DestroyModelMixin, ScopedReadOnlyViewSet):
    """MirrorMaker 2 flows of the caller's teams. A detail asks Connect for the state of the flow's connectors."""

    queryset = ReplicationFlow.objects.select_related(
        "team", "source_cluster", "target_cluster", "connect_cluster"
    ).exclude(state=FlowState.DELETED)
    serializer_class = serializers.ReplicationFlowSerializer
    filterset_class = filtersets.ReplicationFlowFilterSet
    create_serializer_class = serializers.ReplicationFlowCreateInputSerializer
    write_role = TeamRole.DEVELOPER

    @extend_schema(
        request=serializers.ReplicationFlowCreateInputSerializer,
        responses={201: serializers.ReplicationFlowSerializer},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Creates the flow's Kafka users, ACLs and connectors; a flow that Connect or a cluster refused is
        answered with state `failed` and the reason."""
        data = self.validated_input(serializers.ReplicationFlowCreateInputSerializer)
        visible = visible_organization_ids(self.actor)
        for field in ("team", "source_cluster", "target_cluster", "connect_cluster"):
            if data[field].organization_id not in visible:
                raise ServiceError("Not found.", code="not_found", details={"fields": {field: ["not found"]}})
        return self.respond(services.create_flow(actor=self.actor, **data), status.HTTP_201_CREATED)

    @extend_schema(responses=serializers.ReplicationFlowDetailSerializer)
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        flow = self.get_object()
        context = {
            **self.get_serializer_context(),
            "connectors": services.flow_status(flow=flow),
            "alerts": alerting.flow_alerts(flow),
            "lag_history": alerting.lag_history(flow),
        }
        return Response(serializers.ReplicationFlowDetailSerializer(flow, context=context).data)

    @extend_schema(
        request=serializers.ReplicationFlowUpdateInputSerializer,
        responses=serializers.ReplicationFlowSerializer,
    )
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Changes the flow's lag alert threshold (the rest of a flow is fixed: delete and create another)."""
        flow = self.get_object()
        data = self.validated_input(serializers.ReplicationFlowUpdateInputSerializer, instance=flow)
        return self.respond(
            services.set_lag_alert_records(
                actor=self.actor, flow=flow, lag_alert_records=data["lag_alert_records"]
            )
        )

    @takes_query(serializers.DeleteQuerySerializer)
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Removes the flow's connectors, users and ACLs; its replica topics stay unless
        `delete_replica_topics=true`."""
        query = serializers.DeleteQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        services.delete_flow(
            actor=self.actor,
            flow=self.get_object(),
            delete_replica_topics=query.validated_data["delete_replica_topics"] == "true",
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses=serializers.ReplicationFlowSerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        return self.respond(
            services.set_flow_state(actor=self.actor, flow=self.get_object(), state=FlowState.PAUSED)
        )

    @extend_schema(request=None, responses=serializers.ReplicationFlowSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        return self.respond(
            services.set_flow_state(actor=self.actor, flow=self.get_object(), state=FlowState.RUNNING)
        )

    @extend_schema(responses=serializers.PartitionLagSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def lag(self, request: Request, pk: str | None = None) -> Response:
        """Replication lag per partition now: source end offset against the replica's."""
        return Response(services.flow_lag(flow=self.get_object()))

    @extend_schema(request=serializers.FailOverInputSerializer, responses=serializers.FailOverSerializer)
    @action(detail=True, methods=["post"], url_path="fail-over-group")
    def fail_over_group(self, request: Request, pk: str | None = None) -> Response:
        """Commits on the target the offsets MM2 translated for the group (its consumers must be stopped there)."""
        flow = self.get_object()
        data = self.validated_input(serializers.FailOverInputSerializer, instance=flow)
        return Response(services.fail_over_group(actor=self.actor, flow=flow, group=data["group"]))
