"""Base viewsets: querysets scoped to the caller, writes validated by an input serializer and handed to a
service function, responses shaped by the output serializer."""

from typing import Any, TypeVar

from django.db.models import Model, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.viewsets import GenericViewSet

from controlplane.accounts.models import ApiKey
from controlplane.core.api.client_address import client_address
from controlplane.tenancy.access import Actor, visible_teams_q


def actor_from_request(request: Request) -> Actor:
    api_key = request.auth if isinstance(request.auth, ApiKey) else None
    if api_key is not None:
        user = api_key.user
    else:
        user = request.user if request.user and request.user.is_authenticated else None
    return Actor(user=user, api_key=api_key, client_address=client_address(request._request))


class ScopedViewSet(GenericViewSet):
    """Rows outside what the caller may see do not exist for it: another team's object is a 404, never
    a 403 that would confirm it exists. `team_path` leads from a row to its team."""

    team_path = "team"
    create_serializer_class: type[Serializer] | None = None
    update_serializer_class: type[Serializer] | None = None

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

    def validated_input(self, serializer_class: type[Serializer], *, partial: bool = False) -> dict[str, Any]:
        serializer = serializer_class(
            data=self.request.data, partial=partial, context=self.get_serializer_context()
        )
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

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
        changes = self.validated_input(self.update_serializer_class, partial=partial)
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
