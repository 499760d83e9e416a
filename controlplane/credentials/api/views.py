from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.credentials import filtersets, services
from controlplane.credentials.api import serializers
from controlplane.credentials.models import ScramCredential
from controlplane.tenancy.api.viewsets import DestroyWithServiceMixin, ScopedReadOnlyViewSet
from controlplane.tenancy.choices import TeamRole


@extend_schema(tags=["service accounts"])
class ScramCredentialViewSet(DestroyWithServiceMixin, ScopedReadOnlyViewSet):
    """SCRAM credentials of service accounts on clusters: issued and rotated here (the password is in
    that response only), used by Kafka clients as `sasl.username` = the service account's name."""

    write_role = TeamRole.DEVELOPER
    queryset = ScramCredential.objects.select_related("service_account__team", "cluster")
    serializer_class = serializers.ScramCredentialSerializer
    team_path = "service_account__team"
    filterset_class = filtersets.ScramCredentialFilterSet

    def _with_password(self, credential: ScramCredential, password: str, code: int) -> Response:
        body = serializers.ScramCredentialWithPasswordSerializer(
            credential, context={"password": password}
        ).data
        return Response(body, status=code)

    @extend_schema(
        request=serializers.ScramCredentialCreateInputSerializer,
        responses={201: serializers.ScramCredentialWithPasswordSerializer},
    )
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        data = self.validated_input(serializers.ScramCredentialCreateInputSerializer)
        credential, password = services.issue_scram_credential(actor=self.actor, **data)
        return self._with_password(credential, password, status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=serializers.ScramCredentialWithPasswordSerializer)
    @action(detail=True, methods=["post"])
    def rotate(self, request: Request, pk: str | None = None) -> Response:
        credential, password = services.rotate_scram_credential(
            actor=self.actor, credential=self.get_object()
        )
        return self._with_password(credential, password, status.HTTP_200_OK)

    def perform_destroy(self, credential: ScramCredential) -> None:
        services.revoke_scram_credential(actor=self.actor, credential=credential)
