from datetime import timedelta

from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.accounts import filtersets, services
from controlplane.accounts.api import serializers
from controlplane.accounts.keys import KeyToken
from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.tenancy.access import visible_teams_q
from controlplane.tenancy.api.viewsets import (
    CreateWithServiceMixin,
    ScopedModelViewSet,
    ScopedReadOnlyViewSet,
    document_writes,
)
from controlplane.tenancy.choices import TeamRole


@extend_schema(tags=["service accounts"])
@document_writes
class ServiceAccountViewSet(ScopedModelViewSet):
    """Applications' identities, owned by a team; Kafka principal `User:<name>`."""

    queryset = ServiceAccount.objects.select_related("team__organization")
    serializer_class = serializers.ServiceAccountSerializer
    write_role = TeamRole.DEVELOPER
    create_serializer_class = serializers.ServiceAccountCreateInputSerializer
    update_serializer_class = serializers.ServiceAccountUpdateInputSerializer
    filterset_class = filtersets.ServiceAccountFilterSet
    ordering_fields = ["name", "created_at"]

    def perform_create(self, data: dict) -> ServiceAccount:
        return services.create_service_account(actor=self.actor, **data)

    def perform_update(self, account: ServiceAccount, changes: dict) -> ServiceAccount:
        description = changes.get("description", account.description)
        return services.update_service_account(
            actor=self.actor, service_account=account, description=description
        )

    def perform_destroy(self, account: ServiceAccount) -> None:
        services.delete_service_account(actor=self.actor, service_account=account)


@extend_schema(tags=["api keys"])
@extend_schema_view(
    create=extend_schema(
        request=serializers.ApiKeyCreateInputSerializer,
        responses={201: serializers.ApiKeyWithSecretSerializer},
    ),
)
class ApiKeyViewSet(CreateWithServiceMixin, ScopedReadOnlyViewSet):
    """REST API keys: the caller's personal keys and the keys of service accounts it can see.

    The secret is in the create and rotate responses only; afterwards only its hash exists.
    """

    queryset = ApiKey.objects.select_related("user", "service_account__team__organization", "rotated_from")
    serializer_class = serializers.ApiKeySerializer
    create_serializer_class = serializers.ApiKeyCreateInputSerializer
    filterset_class = filtersets.ApiKeyFilterSet
    ordering_fields = ["created_at", "name", "expires_at", "last_used_at"]
    lookup_field = "key_id"

    def restrict(self, queryset: QuerySet) -> QuerySet:
        visible = Q(service_account__isnull=False) & visible_teams_q(self.actor, "service_account__team")
        if self.actor.user is not None and self.actor.service_account is None:
            visible |= Q(user=self.actor.user)
        return queryset.filter(visible)

    def _with_secret(self, api_key: ApiKey, token: KeyToken, status_code: int) -> Response:
        context = {**self.get_serializer_context(), "token": token}
        return Response(
            serializers.ApiKeyWithSecretSerializer(api_key, context=context).data, status=status_code
        )

    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        data = self.validated_input(self.create_serializer_class)
        api_key, token = services.create_api_key(actor=self.actor, owner_must_hold_role=True, **data)
        return self._with_secret(api_key, token, status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=serializers.ApiKeySerializer)
    @action(detail=True, methods=["post"])
    def revoke(self, request: Request, key_id: str) -> Response:
        """Stops the key at once."""
        return self.respond(services.revoke_api_key(actor=self.actor, api_key=self.get_object()))

    @extend_schema(
        request=serializers.ApiKeyRotateInputSerializer,
        responses={201: serializers.ApiKeyWithSecretSerializer},
    )
    @action(detail=True, methods=["post"])
    def rotate(self, request: Request, key_id: str) -> Response:
        """Issues a replacement key; the old one keeps working for `overlap_seconds`."""
        data = self.validated_input(serializers.ApiKeyRotateInputSerializer)
        replacement, token = services.rotate_api_key(
            actor=self.actor,
            api_key=self.get_object(),
            overlap=timedelta(seconds=data["overlap_seconds"]),
            owner_must_hold_role=True,
        )
        return self._with_secret(replacement, token, status.HTTP_201_CREATED)
