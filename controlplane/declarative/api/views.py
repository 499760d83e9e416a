from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.core.api.query import takes_query
from controlplane.core.errors import ServiceError
from controlplane.declarative import documents as declared
from controlplane.declarative import filtersets, services
from controlplane.declarative.api import serializers
from controlplane.declarative.export import export_team
from controlplane.declarative.models import ChangeSet, ManagedResource
from controlplane.declarative.planning import plan_documents
from controlplane.tenancy.access import require_team_role, visible_organization_ids
from controlplane.tenancy.api.viewsets import ScopedReadOnlyViewSet, ScopedViewSet
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team


@extend_schema(tags=["resources as code"])
class DeclarativeViewSet(ScopedViewSet):
    """Plan and apply a file set of documents, export a team's resources as documents, and the format's
    JSON Schema. Plans and applies check each change as the API does; roles are the services' to check."""

    queryset = ChangeSet.objects.none()
    serializer_class = serializers.PlanSerializer
    action_roles = {"plan": TeamRole.VIEWER, "apply": TeamRole.DEVELOPER}

    def _documents(self, serializer_class: type) -> dict:
        data = self.validated_input(serializer_class)
        data["documents"] = declared.read_documents(
            data["documents"], team=data.get("team"), cluster=data.get("cluster")
        )
        return data

    @extend_schema(request=serializers.DocumentsInputSerializer, responses=serializers.PlanSerializer)
    @action(detail=False, methods=["post"])
    def plan(self, request: Request) -> Response:
        data = self._documents(serializers.DocumentsInputSerializer)
        plan = plan_documents(
            actor=self.actor,
            documents=data["documents"],
            file_set=data["file_set"],
            prune=data["prune"],
            team=data.get("team"),
        )
        return Response(plan.as_dict())

    @extend_schema(request=serializers.ApplyInputSerializer, responses=serializers.ApplySerializer)
    @action(detail=False, methods=["post"])
    def apply(self, request: Request) -> Response:
        data = self._documents(serializers.ApplyInputSerializer)
        plan, change_set = services.plan_and_apply(
            actor=self.actor,
            documents=data["documents"],
            file_set=data["file_set"],
            prune=data["prune"],
            team=data.get("team"),
            expected_plan_id=data.get("plan_id"),
        )
        shown = serializers.ChangeSetSerializer(change_set).data if change_set is not None else None
        return Response({"plan": plan.as_dict(), "change_set": shown})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @takes_query(serializers.ExportQuerySerializer)
    @action(detail=False, methods=["get"])
    def export(self, request: Request) -> Response:
        query = serializers.ExportQuerySerializer(
            data=request.query_params, context=self.get_serializer_context()
        )
        query.is_valid(raise_exception=True)
        cluster = query.validated_data["cluster"]
        team = Team.objects.filter(
            organization_id=cluster.organization_id, slug=query.validated_data["team"]
        ).first()
        if team is None or cluster.organization_id not in visible_organization_ids(self.actor):
            raise ServiceError(
                f"No team with the slug {query.validated_data['team']!r} here.", code="unknown_team"
            )
        require_team_role(self.actor, team, TeamRole.VIEWER)
        return Response({"documents": export_team(team=team, cluster=cluster)})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=False, methods=["get"], url_path="schema")
    def json_schema(self, request: Request) -> Response:
        return Response(declared.json_schema())


@extend_schema(tags=["resources as code"])
class ChangeSetViewSet(ScopedReadOnlyViewSet):
    """Applied change sets of the organizations the caller belongs to, each with its per-change report."""

    queryset = ChangeSet.objects.all()
    serializer_class = serializers.ChangeSetSerializer
    filterset_class = filtersets.ChangeSetFilterSet
    ordering_fields = ["created_at"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(organization_id__in=visible_organization_ids(self.actor))


@extend_schema(tags=["resources as code"])
class ManagedResourceViewSet(ScopedReadOnlyViewSet):
    """Resources managed as code: which file set declares each, and the change set that last applied it."""

    queryset = ManagedResource.objects.select_related("team", "cluster", "change_set")
    serializer_class = serializers.ManagedResourceSerializer
    filterset_class = filtersets.ManagedResourceFilterSet
    ordering_fields = ["kind", "name", "updated_at"]
