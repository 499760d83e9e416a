from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.tenancy import filtersets, services
from controlplane.tenancy.access import org_roles, visible_organization_ids
from controlplane.tenancy.api import serializers
from controlplane.tenancy.api.viewsets import (
    ORG_ADMIN,
    CreateWithServiceMixin,
    DestroyWithServiceMixin,
    ScopedModelViewSet,
    ScopedReadOnlyViewSet,
    UpdateWithServiceMixin,
    document_writes,
)
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Membership, Organization, OrgMembership, Team, TeamPolicy, TeamPrefix


@extend_schema(tags=["tenancy"])
class OrganizationViewSet(ScopedReadOnlyViewSet):
    """Organizations the caller belongs to. Platform administrators (superusers, signed in) create them and
    become their first org admin."""

    write_role = ORG_ADMIN
    action_roles = {"create": None}  # a platform admin need not administer any organization yet
    queryset = Organization.objects.all()
    serializer_class = serializers.OrganizationSerializer
    filterset_class = filtersets.OrganizationFilterSet
    ordering_fields = ["name", "created_at"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(id__in=visible_organization_ids(self.actor))

    @extend_schema(
        request=serializers.OrganizationCreateInputSerializer,
        responses={201: serializers.OrganizationSerializer},
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        services.require_platform_admin(self.actor)  # before the body: permission is said first
        values = self.validated_input(serializers.OrganizationCreateInputSerializer)
        organization = services.create_organization(actor=self.actor, first_admin=self.actor.user, **values)
        return self.respond(organization, status.HTTP_201_CREATED)

    @extend_schema(methods=["GET"], request=None, responses=serializers.OrganizationGuardrailsSerializer)
    @extend_schema(
        methods=["PATCH"],
        request=serializers.GuardrailLimitsInputSerializer,
        responses=serializers.OrganizationGuardrailsSerializer,
    )
    @action(detail=True, methods=["get", "patch"])
    def guardrails(self, request: Request, pk: str | None = None) -> Response:
        """The limits every team of the organization gets unless its own policy sets them; org admins
        change them (null returns a limit to the default)."""
        organization = self.get_object()
        if request.method == "PATCH":
            changes = self.validated_input(serializers.GuardrailLimitsInputSerializer, partial=True)
            organization = services.update_organization_guardrails(
                actor=self.actor, organization=organization, changes=changes
            )
        return Response(serializers.OrganizationGuardrailsSerializer(organization).data)


@extend_schema(tags=["tenancy"])
@document_writes
class OrgMembershipViewSet(ScopedModelViewSet):
    """Who belongs to an organization and who administers it; visible to and managed by org admins."""

    write_role = ORG_ADMIN
    queryset = OrgMembership.objects.select_related("user", "organization")
    serializer_class = serializers.OrgMembershipSerializer
    create_serializer_class = serializers.OrgMembershipCreateInputSerializer
    update_serializer_class = serializers.OrgMembershipUpdateInputSerializer
    filterset_class = filtersets.OrgMembershipFilterSet
    ordering_fields = ["created_at", "user__username"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(organization_id__in=list(org_roles(self.actor)))

    def perform_create(self, data: dict) -> OrgMembership:
        return services.add_org_member(
            actor=self.actor,
            organization=data["organization"],
            user=data["username"],
            is_org_admin=data["is_org_admin"],
        )

    def perform_update(self, membership: OrgMembership, changes: dict) -> OrgMembership:
        is_org_admin = changes.get("is_org_admin", membership.is_org_admin)
        return services.update_org_member(actor=self.actor, membership=membership, is_org_admin=is_org_admin)

    def perform_destroy(self, membership: OrgMembership) -> None:
        services.remove_org_member(actor=self.actor, membership=membership)


@extend_schema(tags=["tenancy"])
@document_writes
class TeamViewSet(ScopedModelViewSet):
    """Org admins create and delete teams; team admins edit their own team."""

    action_roles = {"create": ORG_ADMIN}
    queryset = Team.objects.select_related("organization")
    serializer_class = serializers.TeamSerializer
    write_role = TeamRole.TEAM_ADMIN
    create_serializer_class = serializers.TeamCreateInputSerializer
    update_serializer_class = serializers.TeamUpdateInputSerializer
    filterset_class = filtersets.TeamFilterSet
    ordering_fields = ["name", "created_at"]
    team_path = ""

    def perform_create(self, data: dict) -> Team:
        return services.create_team(actor=self.actor, **data)

    def perform_update(self, team: Team, changes: dict) -> Team:
        return services.update_team(actor=self.actor, team=team, **changes)

    def perform_destroy(self, team: Team) -> None:
        services.delete_team(actor=self.actor, team=team)


@extend_schema(tags=["tenancy"])
@document_writes
class MembershipViewSet(ScopedModelViewSet):
    """Team members and their roles; team admins manage their team's members."""

    queryset = Membership.objects.select_related("user", "team__organization")
    serializer_class = serializers.MembershipSerializer
    write_role = TeamRole.TEAM_ADMIN
    create_serializer_class = serializers.MembershipCreateInputSerializer
    update_serializer_class = serializers.MembershipUpdateInputSerializer
    filterset_class = filtersets.MembershipFilterSet
    ordering_fields = ["created_at", "role", "user__username"]

    def perform_create(self, data: dict) -> Membership:
        return services.add_member(
            actor=self.actor, team=data["team"], user=data["username"], role=data["role"]
        )

    def perform_update(self, membership: Membership, changes: dict) -> Membership:
        role = changes.get("role", membership.role)
        return services.change_member_role(actor=self.actor, membership=membership, role=role)

    def perform_destroy(self, membership: Membership) -> None:
        services.remove_member(actor=self.actor, membership=membership)


@extend_schema(tags=["tenancy"])
@document_writes
class TeamPrefixViewSet(CreateWithServiceMixin, DestroyWithServiceMixin, ScopedReadOnlyViewSet):
    """Name prefixes a team owns; org admins hand them out, and no two teams' prefixes overlap."""

    action_roles = {"create": ORG_ADMIN}
    queryset = TeamPrefix.objects.select_related("team__organization")
    serializer_class = serializers.TeamPrefixSerializer
    write_role = TeamRole.TEAM_ADMIN
    create_serializer_class = serializers.TeamPrefixCreateInputSerializer
    filterset_class = filtersets.TeamPrefixFilterSet
    ordering_fields = ["prefix", "resource_type", "created_at"]

    def perform_create(self, data: dict) -> TeamPrefix:
        return services.add_prefix(actor=self.actor, **data)

    def perform_destroy(self, team_prefix: TeamPrefix) -> None:
        services.remove_prefix(actor=self.actor, team_prefix=team_prefix)


@extend_schema(tags=["tenancy"])
@document_writes
class TeamPolicyViewSet(UpdateWithServiceMixin, ScopedReadOnlyViewSet):
    """Each team's limits; every team has exactly one policy, which org admins edit."""

    queryset = TeamPolicy.objects.select_related("team__organization")
    serializer_class = serializers.TeamPolicySerializer
    write_role = TeamRole.TEAM_ADMIN
    update_serializer_class = serializers.TeamPolicyUpdateInputSerializer
    filterset_class = filtersets.TeamPolicyFilterSet
    ordering_fields = ["team", "updated_at"]

    def perform_update(self, policy: TeamPolicy, changes: dict) -> TeamPolicy:
        return services.update_policy(actor=self.actor, policy=policy, changes=changes)
