from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.core.api.query import takes_query
from controlplane.lag import filtersets, history
from controlplane.lag.api import serializers
from controlplane.lag.models import GroupLag
from controlplane.tenancy.access import org_roles, visible_teams_q
from controlplane.tenancy.api.viewsets import ScopedReadOnlyViewSet


@extend_schema(tags=["consumer lag"])
class GroupLagViewSet(ScopedReadOnlyViewSet):
    """Health and lag of the consumer groups the caller may see (their teams' groups; org admins: every
    group of their clusters), worst first. `{group}` is the consumer group's id or its name (`?cluster=<id>`
    picks one where several clusters have a group of that name)."""

    queryset = GroupLag.objects.select_related("group")
    serializer_class = serializers.GroupLagSerializer
    filterset_class = filtersets.GroupLagFilterSet
    ordering_fields = ["severity", "lag_messages", "lag_seconds", "time_to_catch_up_seconds", "observed_at"]
    lookup_field = "group"
    # Group names may hold dots (the router's default pattern stops at one).
    lookup_value_regex = "[^/]+"

    def get_object(self) -> GroupLag:
        """By the consumer group's id, or by its name (`?cluster=<id>` picks one where several clusters have
        a group of that name)."""
        value = self.kwargs[self.lookup_field]
        queryset = self.get_queryset()  # what the caller may see; list filters do not apply to one group
        if value.isdigit():
            found = queryset.filter(group_id=int(value)).first()
            if found is not None:
                self.check_object_permissions(self.request, found)
                return found
        by_name = queryset.filter(group__name=value)
        cluster = self.request.query_params.get("cluster")
        if cluster is not None:
            if not cluster.isdigit():
                raise ValidationError({"cluster": ["A cluster id."]})
            by_name = by_name.filter(cluster_id=int(cluster))
        matches = list(by_name[:2])
        if not matches:
            raise NotFound("No such consumer group.")
        if len(matches) > 1:
            raise ValidationError(
                {"cluster": [f"Several clusters have a group named {value!r}: add ?cluster=<id>."]}
            )
        self.check_object_permissions(self.request, matches[0])
        return matches[0]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        visible = visible_teams_q(self.actor, "group__team") | Q(
            group__team__isnull=True, cluster__organization_id__in=list(org_roles(self.actor))
        )
        queryset = queryset.filter(visible)
        # The fleet view shows totals; the per-partition JSON is for a group's detail only.
        return queryset.defer("partitions", "members") if self.action == "list" else queryset

    @extend_schema(responses=serializers.GroupLagDetailSerializer)
    @takes_query(serializers.GroupLookupQuerySerializer)
    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Current status with its reason, members and every partition's lag, rates and status."""
        return Response(serializers.GroupLagDetailSerializer(self.get_object()).data)

    @extend_schema(responses=serializers.LagChartSerializer)
    @takes_query(serializers.ChartQuerySerializer)
    @action(detail=True, methods=["get"])
    def chart(self, request: Request, group: str | None = None) -> Response:
        """Lag over time, in messages and seconds, per partition and in total."""
        lag = self.get_object()
        query = serializers.ChartQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        until = query.validated_data.get("until") or timezone.now()
        since = query.validated_data.get("since") or until - timedelta(hours=1)
        resolution = query.validated_data["resolution"]
        if resolution == "auto":
            resolution = history.pick_resolution(since, until)
        data = history.chart(
            history.lag_redis(), group_id=lag.group_id, since=since, until=until, resolution=resolution
        )
        # Already JSON-shaped; a serializer pass over ~30,000 values of a 24-hour chart would triple its time.
        return Response(data)
