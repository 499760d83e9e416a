from django.conf import settings
from django.contrib.auth import login
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action, api_view, permission_classes, throttle_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.core.api.authentication import enforce_csrf
from controlplane.core.api.client_address import client_address
from controlplane.core.api.throttling import LoginRateThrottle
from controlplane.people import filtersets, oidc, services
from controlplane.people.api import serializers
from controlplane.tenancy.access import org_roles
from controlplane.tenancy.api.viewsets import ORG_ADMIN, ScopedReadOnlyViewSet
from controlplane.tenancy.choices import TeamRole


def _issued(link: services.IssuedLink | None) -> dict | None:
    return None if link is None else serializers.IssuedLinkSerializer(link).data


@extend_schema(tags=["people"])
class PersonViewSet(ScopedReadOnlyViewSet):
    """People of the organizations the caller administers (platform administrators: everyone). Org admins
    invite or create people, give them team roles (`/memberships/`), deactivate and reactivate them and
    send them a one-time link to set a new password."""

    write_role = ORG_ADMIN
    queryset = serializers.user_queryset().order_by("username")
    serializer_class = serializers.PersonSerializer
    filterset_class = filtersets.PersonFilterSet
    ordering_fields = ["username", "date_joined", "last_login"]

    def restrict(self, queryset: QuerySet) -> QuerySet:
        actor = self.actor
        if actor.user is not None and actor.user.is_superuser and actor.api_key is None:
            return queryset
        administered = [org for org, role in org_roles(actor).items() if role == TeamRole.TEAM_ADMIN]
        return queryset.filter(org_memberships__organization_id__in=administered).distinct()

    def _base_url(self) -> str:
        return self.request.build_absolute_uri("/")

    def _person(self, user) -> Response:
        # Read again: memberships and links changed by the service are not in the prefetched rows.
        return Response(serializers.PersonSerializer(serializers.user_queryset().get(pk=user.pk)).data)

    @extend_schema(
        request=serializers.PersonCreateInputSerializer, responses={201: serializers.CreatedPersonSerializer}
    )
    def create(self, request: Request) -> Response:
        """Creates a person with a password, or invites them: the answer's link (shown only here) lets them
        set their own password; it is also e-mailed when an e-mail backend is configured."""
        data = self.validated_input(serializers.PersonCreateInputSerializer)
        user, link = services.create_person(
            actor=self.actor,
            organization=data["organization"],
            username=data["username"],
            email=data["email"],
            is_org_admin=data["is_org_admin"],
            teams=[(entry["team"], entry["role"]) for entry in data["teams"]],
            password=data["password"] or None,
            base_url=self._base_url(),
        )
        person = serializers.user_queryset().get(pk=user.pk)
        body = {"person": serializers.PersonSerializer(person).data, "link": _issued(link)}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=serializers.PersonUpdateInputSerializer, responses=serializers.PersonSerializer)
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        user = self.get_object()
        # A PATCH changes what it names (the schema documents every field as optional): {} changes nothing.
        data = self.validated_input(serializers.PersonUpdateInputSerializer, partial=True, instance=user)
        email = data.get("email", user.email)
        return self._person(services.update_person(actor=self.actor, user=user, email=email))

    @extend_schema(request=None, responses=serializers.PersonSerializer)
    @action(detail=True, methods=["post"])
    def deactivate(self, request: Request, pk: str | None = None) -> Response:
        """Ends the person's access at once (sessions, personal API keys, open links); memberships stay."""
        return self._person(services.deactivate_person(actor=self.actor, user=self.get_object()))

    @extend_schema(request=None, responses=serializers.PersonSerializer)
    @action(detail=True, methods=["post"])
    def reactivate(self, request: Request, pk: str | None = None) -> Response:
        return self._person(services.reactivate_person(actor=self.actor, user=self.get_object()))

    @extend_schema(request=None, responses={201: serializers.IssuedLinkSerializer})
    @action(detail=True, methods=["post"], url_path="password-link")
    def password_link(self, request: Request, pk: str | None = None) -> Response:
        """A new one-time link to set a password (an invitation again if none was ever set); earlier links
        stop working. The link is shown only in this answer."""
        link = services.issue_password_link(
            actor=self.actor, user=self.get_object(), base_url=self._base_url()
        )
        return Response(_issued(link), status=status.HTTP_201_CREATED)


@extend_schema(
    request=serializers.TokenInputSerializer, responses=serializers.LinkInfoSerializer, tags=["auth"]
)
@api_view(["POST"])
@permission_classes([AllowAny])
@throttle_classes([LoginRateThrottle])
def inspect_password_link(request: Request) -> Response:
    """Whose one-time link this is and until when it works (the token travels in the body, never in a URL)."""
    enforce_csrf(request)
    data = serializers.TokenInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    link = services.inspect_link(data.validated_data["token"])
    return Response(serializers.LinkInfoSerializer(link).data)


@extend_schema(request=serializers.SetPasswordInputSerializer, responses={204: None}, tags=["auth"])
@api_view(["POST"])
@permission_classes([AllowAny])
@throttle_classes([LoginRateThrottle])
def use_password_link(request: Request) -> Response:
    """Sets the password with a one-time link and signs the person in with it (they just proved they hold
    the link and chose the password), unless password sign-in is turned off for them."""
    enforce_csrf(request)
    data = serializers.SetPasswordInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    user = services.use_link(
        token=data.validated_data["token"],
        password=data.validated_data["password"],
        client_address=client_address(request._request),
    )
    if _password_sign_in_allowed(user.username):
        login(request._request, user, backend=MODEL_BACKEND)
    return Response(status=status.HTTP_204_NO_CONTENT)


MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _password_sign_in_allowed(username: str) -> bool:
    """The login endpoint's rule: with single sign-on hiding the password form, only break-glass accounts."""
    hidden = settings.OIDC_HIDE_LOCAL_LOGIN and oidc.current_config() is not None
    return not hidden or username in settings.OIDC_BREAK_GLASS_USERS
