"""Base viewsets of every app's API: querysets scoped to the caller's teams, writes validated by an input
serializer and handed to a service function, responses shaped by the output serializer.

They stand on tenancy's access rules, so they live here; the apps above (audit, accounts, people and the rest)
build their APIs on them. The caller's Actor comes from its credentials (`access.Credentials`), whatever app
authenticated them, and a refused write reaches the audit log through `controlplane.core.changes`."""

from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.viewsets import GenericViewSet

from controlplane.core.api.client_address import client_address
from controlplane.core.api.json_types import mistyped_fields
from controlplane.core.api.query import accepted_query_parameters, refuse_unexpected
from controlplane.core.changes import Change, record_change
from controlplane.core.errors import Forbidden
from controlplane.tenancy.access import (
    Actor,
    Credentials,
    org_roles,
    role_in_team,
    team_roles,
    visible_teams_q,
)
from controlplane.tenancy.choices import ROLE_RANK, TeamRole
from controlplane.tenancy.models import Team

ORG_ADMIN = "org_admin"


def actor_from_request(request: Request) -> Actor:
    address = client_address(request._request)
    if isinstance(request.auth, Credentials):  # an API key, an access token: they say how their caller acts
        return request.auth.actor(request.user, address)
    user = request.user if request.user and request.user.is_authenticated else None
    return Actor(user=user, client_address=address)  # a console session, or nobody signed in


class ScopedViewSet(GenericViewSet):
    """Rows outside what the caller may see do not exist for it: another team's object is a 404, never
    a 403 that would confirm it exists. `team_path` leads from a row to its team."""

    team_path = "team"
    create_serializer_class: type[Serializer] | None = None
    update_serializer_class: type[Serializer] | None = None
    # The least team role that any write through this viewset needs (None: only the service checks). A caller
    # below it gets 403 even for a payload that is not valid: what may not be done is said before what is
    # wrong with the request, and a payload's errors are not shown to someone who may not write at all.
    write_role: str | None = None
    # Unsafe actions whose least role differs from `write_role`: ORG_ADMIN for what only an org admin does,
    # a team role (VIEWER for previews that only read), or None for what anyone signed in may do.
    action_roles: dict[str, str | None] = {}

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if self.action is None:  # no action: the method's 405 follows
            return
        if request.method not in SAFE_METHODS:
            self.check_write_allowed()
        try:
            refuse_unexpected(request.query_params, accepted_query_parameters(self, self.action))
        except ValidationError:
            if (self.lookup_url_kwarg or self.lookup_field) in self.kwargs:
                self.get_object()  # another team's object is a 404 before anything is said about the query
            raise

    def check_write_allowed(self) -> None:
        """The object first (another team's is a 404: a 403 would confirm it exists), then the caller's role,
        before the body or the query is looked at."""
        instance = None
        if (self.lookup_url_kwarg or self.lookup_field) in self.kwargs:
            instance = self.get_object()
        try:
            self.require_some_write_role()
        except Forbidden as refusal:
            change = Change(action=f"{self.basename}.{self.action}", resource_type=self.basename or "")
            if instance is not None:
                change.on(instance)
                change.organization_id = getattr(instance, "organization_id", None)
            record_change(actor=self.actor, change=change, refusal=refusal)
            raise

    def require_some_write_role(self) -> None:
        """403 before the body is read when no role the caller has anywhere allows the action: permission
        is said first, and a body's errors are not shown to someone who may not act."""
        needed = self.action_roles.get(self.action, self.write_role)
        if needed is None or self.actor.is_system:
            return
        if needed == ORG_ADMIN:
            if TeamRole.TEAM_ADMIN not in org_roles(self.actor).values():
                raise Forbidden("Only org admins may do this.", details={"required_role": ORG_ADMIN})
            return
        roles = [*team_roles(self.actor).values(), *org_roles(self.actor).values()]
        if not any(ROLE_RANK[role] >= ROLE_RANK[needed] for role in roles):
            raise Forbidden(
                f"This needs the {TeamRole(needed).label.lower()} role in a team.",
                details={"required_role": needed},
            )

    @property
    def actor(self) -> Actor:
        if not hasattr(self, "_actor"):
            self._actor = actor_from_request(self.request)
        return self._actor

    def get_queryset(self) -> QuerySet:
        queryset = super().get_queryset()
        if getattr(self, "swagger_fake_view", False):
            return queryset.none()
        return self.restrict(queryset)

    def restrict(self, queryset: QuerySet) -> QuerySet:
        return queryset.filter(visible_teams_q(self.actor, self.team_path))

    def validated_input(
        self, serializer_class: type[Serializer], *, partial: bool = False, instance: Model | None = None
    ) -> dict[str, Any]:
        serializer = serializer_class(
            data=self.request.data, partial=partial, context=self.get_serializer_context()
        )
        mistyped = mistyped_fields(serializer, self.request.data)
        if mistyped or not serializer.is_valid():
            self.require_write_role(instance)
        if mistyped:
            raise ValidationError(mistyped)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def _team_of(self, instance: Model | None) -> Team | None:
        if instance is not None:
            for step in [step for step in self.team_path.split("__") if step]:
                instance = getattr(instance, step)
            return instance if isinstance(instance, Team) else None
        team_id = self.request.data.get("team") if isinstance(self.request.data, dict) else None
        if not isinstance(team_id, int) or isinstance(team_id, bool):
            return None
        return Team.objects.filter(visible_teams_q(self.actor), pk=team_id).first()

    def require_write_role(self, instance: Model | None = None) -> None:
        """403 when the caller's role is below `write_role` in the object's team (or the payload's team, or,
        when neither is known, in every team it has)."""
        if self.write_role in (None, ORG_ADMIN) or self.actor.is_system:
            return  # an org admin's organization is checked by the service, on the object it acts on
        team = self._team_of(instance)
        if team is not None:
            role = role_in_team(self.actor, team)
            roles = [role] if role is not None else []
        else:
            roles = [*team_roles(self.actor).values(), *org_roles(self.actor).values()]
        if not any(ROLE_RANK[role] >= ROLE_RANK[self.write_role] for role in roles):
            raise Forbidden(
                f"This needs the {TeamRole(self.write_role).label.lower()} role"
                + (f" in team {team.name}." if team is not None and roles else " in a team."),
                details={"required_role": self.write_role},
            )

    def respond(self, instance: Model, status_code: int = status.HTTP_200_OK) -> Response:
        return Response(self.get_serializer(instance).data, status=status_code)


ViewSetClass = TypeVar("ViewSetClass", bound=type[ScopedViewSet])


class ScopedReadOnlyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    """List and retrieve; subclasses add the write mixins below for the writes they allow."""


class CreateWithServiceMixin:
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        instance = self.perform_create(self.validated_input(self.create_serializer_class))
        return self.respond(instance, status.HTTP_201_CREATED)


class UpdateWithServiceMixin:
    def update(self, request: Request, *args: Any, partial: bool = False, **kwargs: Any) -> Response:
        instance = self.get_object()
        changes = self.validated_input(self.update_serializer_class, partial=partial, instance=instance)
        return self.respond(self.perform_update(instance, changes))

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.update(request, *args, partial=True, **kwargs)


class DestroyWithServiceMixin:
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        self.perform_destroy(self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


class ScopedModelViewSet(
    CreateWithServiceMixin, UpdateWithServiceMixin, DestroyWithServiceMixin, ScopedReadOnlyViewSet
):
    """List, retrieve, create, update and delete; every write goes through `perform_*` to a service."""


def document_writes(viewset: ViewSetClass) -> ViewSetClass:
    """Class decorator for the OpenAPI schema: the viewset's create and update take its input serializers
    and answer with its `serializer_class`."""
    output = viewset.serializer_class
    create, update = viewset.create_serializer_class, viewset.update_serializer_class
    documented = {}
    if create is not None:
        documented["create"] = extend_schema(request=create, responses={201: output})
    if update is not None:
        documented["update"] = extend_schema(request=update, responses=output)
        documented["partial_update"] = extend_schema(request=update, responses=output)
    return extend_schema_view(**documented)(viewset)
