from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters.ownership import visible_rows_q
from controlplane.groups import filtersets, services
from controlplane.groups.api import serializers
from controlplane.groups.models import ConsumerGroup
from controlplane.tenancy.api.viewsets import DestroyWithServiceMixin, ScopedReadOnlyViewSet
from controlplane.tenancy.choices import TeamRole


@extend_schema(tags=["consumer groups"])
class ConsumerGroupViewSet(DestroyWithServiceMixin, ScopedReadOnlyViewSet):
    """Consumer groups whose names are in the caller's teams' group prefixes (org admins: all of their
    clusters'). Lists show the lag the sampler last measured; a group's detail asks the cluster."""

    write_role = TeamRole.DEVELOPER
    queryset = ConsumerGroup.objects.select_related("cluster", "team")
    serializer_class = serializers.ConsumerGroupSerializer
    filterset_class = filtersets.ConsumerGroupFilterSet
    ordering_fields = ["name", "total_lag", "state"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        queryset = queryset.filter(visible_rows_q(self.actor))
        # Lists show totals; the per-partition JSON is for details only and is the bulk of each row.
        return queryset.defer("partition_lags") if self.action == "list" else queryset

    @extend_schema(responses=serializers.ConsumerGroupDetailSerializer)
    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        group = self.get_object()
        live = services.describe_group(actor=self.actor, group=group)
        context = {**self.get_serializer_context(), "live": live}
        return Response(serializers.ConsumerGroupDetailSerializer(group, context=context).data)

    def _reset_request(self) -> services.ResetRequest:
        data = self.validated_input(serializers.ResetInputSerializer)
        return services.ResetRequest(**data)

    @extend_schema(
        request=serializers.ResetInputSerializer, responses=serializers.PlannedOffsetSerializer(many=True)
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="reset-offsets/preview",
        pagination_class=None,
        filter_backends=[],
    )
    def preview_reset(self, request: Request, pk: str | None = None) -> Response:
        """Old -> new offsets the reset would commit; nothing changes."""
        planned = services.preview_reset(
            actor=self.actor, group=self.get_object(), request=self._reset_request()
        )
        return Response(serializers.PlannedOffsetSerializer(planned, many=True).data)

    @extend_schema(
        request=serializers.ResetInputSerializer, responses={201: serializers.OffsetResetSerializer}
    )
    @action(detail=True, methods=["post"], url_path="reset-offsets")
    def reset_offsets(self, request: Request, pk: str | None = None) -> Response:
        """Commits new offsets (refused with 409 while the group has members); the old ones are kept."""
        reset = services.reset_offsets(
            actor=self.actor, group=self.get_object(), request=self._reset_request()
        )
        return Response(serializers.OffsetResetSerializer(reset).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=serializers.OffsetResetSerializer)
    @action(detail=True, methods=["post"], url_path="undo-reset")
    def undo_reset(self, request: Request, pk: str | None = None) -> Response:
        """Restores the offsets the latest reset replaced."""
        reset = services.undo_reset(actor=self.actor, group=self.get_object())
        return Response(serializers.OffsetResetSerializer(reset).data)

    @extend_schema(responses=serializers.OffsetResetSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filter_backends=[])
    def resets(self, request: Request, pk: str | None = None) -> Response:
        group = self.get_object()
        return Response(serializers.OffsetResetSerializer(group.offset_resets.all()[:50], many=True).data)

    @extend_schema(request=serializers.DeleteOffsetsInputSerializer, responses={204: None})
    @action(detail=True, methods=["post"], url_path="delete-offsets")
    def delete_offsets(self, request: Request, pk: str | None = None) -> Response:
        """Forgets the group's committed offsets for one topic."""
        data = self.validated_input(serializers.DeleteOffsetsInputSerializer)
        services.delete_group_offsets(actor=self.actor, group=self.get_object(), **data)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=serializers.ShareConfigsInputSerializer, responses={204: None})
    @action(detail=True, methods=["post"], url_path="share-configs")
    def share_configs(self, request: Request, pk: str | None = None) -> Response:
        """Changes a share group's delivery settings (share.record.lock.duration.ms, …)."""
        data = self.validated_input(serializers.ShareConfigsInputSerializer)
        services.set_share_configs(
            actor=self.actor, group=self.get_object(), set_configs=data["set"], delete_configs=data["delete"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)

    def perform_destroy(self, group: ConsumerGroup) -> None:
        services.delete_group(actor=self.actor, group=group)
