"""Session login/logout for the browser console, its sign-in options and profile, and the overview the home
page shows."""

import tomllib
from datetime import UTC, datetime, timedelta
from functools import cache

from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes, throttle_classes
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from console.api.serializers import (
    AuthOptionsSerializer,
    CliAuthOptionsSerializer,
    LoginInputSerializer,
    LoginOutputSerializer,
    LogoutOutputSerializer,
    OverviewSerializer,
    ProfileSerializer,
    SessionSerializer,
)
from console.sso_views import LOGIN_PAGE
from console.sso_views import SESSION_KEY as SSO_SESSION_KEY
from controlplane.core.api.authentication import enforce_csrf
from controlplane.core.api.errors import error_body
from controlplane.core.api.throttling import LoginRateThrottle
from controlplane.core.services import HEARTBEAT_TTL_SECONDS, read_worker_heartbeat
from controlplane.people import oidc
from controlplane.people.choices import IdentitySource
from controlplane.people.models import Identity
from controlplane.tenancy.models import Membership, OrgMembership


def _user_data(user) -> dict:
    return {"id": user.id, "username": user.username, "email": user.email, "is_superuser": user.is_superuser}


@extend_schema(responses=SessionSerializer, tags=["auth"])
@api_view(["GET"])
@permission_classes([AllowAny])
@ensure_csrf_cookie
def session_view(request: Request) -> Response:
    user = request.user
    authenticated = bool(user and user.is_authenticated)
    return Response({"authenticated": authenticated, "user": _user_data(user) if authenticated else None})


@extend_schema(request=LoginInputSerializer, responses=LoginOutputSerializer, tags=["auth"])
@api_view(["POST"])
@permission_classes([AllowAny])
@throttle_classes([LoginRateThrottle])
def login_view(request: Request) -> Response:
    enforce_csrf(request)
    credentials = LoginInputSerializer(data=request.data)
    credentials.is_valid(raise_exception=True)
    if local_login_hidden() and credentials.validated_data["username"] not in settings.OIDC_BREAK_GLASS_USERS:
        return Response(
            error_body(
                "local_login_disabled", "Sign in with single sign-on; password sign-in is turned off."
            ),
            status=status.HTTP_403_FORBIDDEN,
        )
    user = authenticate(request._request, **credentials.validated_data)
    if user is None:
        return Response(
            error_body("invalid_credentials", "The username or password is not correct."),
            status=status.HTTP_400_BAD_REQUEST,
        )
    login(request._request, user)
    return Response({"user": _user_data(user)})


@extend_schema(request=None, responses=LogoutOutputSerializer, tags=["auth"])
@api_view(["POST"])
@permission_classes([AllowAny])
def logout_view(request: Request) -> Response:
    """Ends the console session; after a single sign-on, `end_session_url` is the provider's logout page
    (RP-initiated logout) the browser goes to next, so the provider's session ends too."""
    enforce_csrf(request)
    sso_state = request.session.get(SSO_SESSION_KEY) or {}
    config = oidc.current_config()
    end_session_url = None
    if config is not None and sso_state.get("id_token"):
        end_session_url = oidc.end_session_url(
            config,
            id_token=sso_state["id_token"],
            post_logout_redirect_uri=request.build_absolute_uri(LOGIN_PAGE),
        )
    logout(request._request)
    return Response({"end_session_url": end_session_url})


def local_login_hidden() -> bool:
    return settings.OIDC_HIDE_LOCAL_LOGIN and oidc.current_config() is not None


@extend_schema(responses=AuthOptionsSerializer, tags=["auth"])
@api_view(["GET"])
@permission_classes([AllowAny])
def auth_options_view(request: Request) -> Response:
    """How the login page offers to sign in: the single sign-on provider, and whether the password form
    shows (with local login hidden, break-glass accounts still use it at /login?local)."""
    config = oidc.current_config()
    sso = None
    if config is not None:
        sso = {"name": config.provider_name, "login_url": "/api/v1/auth/oidc/login/"}
    return Response({"sso": sso, "local_login": not local_login_hidden()})


@extend_schema(responses=CliAuthOptionsSerializer, tags=["auth"])
@api_view(["GET"])
@permission_classes([AllowAny])
def cli_auth_options_view(request: Request) -> Response:
    """How `streamhub login` may sign a person in without an API key: the provider's issuer, the public client
    registered for the CLI (device authorization grant), the scopes to ask for and the audience the API accepts
    in access tokens. `oidc` is null unless single sign-on, OIDC_CLI_CLIENT_ID and OIDC_API_AUDIENCE are all
    set (a token the API would refuse is not worth a login)."""
    config = oidc.current_config()
    offered = None
    if config is not None and settings.OIDC_CLI_CLIENT_ID and settings.OIDC_API_AUDIENCE:
        offered = {
            "issuer": config.issuer,
            "client_id": settings.OIDC_CLI_CLIENT_ID,
            "scopes": list(settings.OIDC_CLI_SCOPES),
            "audience": settings.OIDC_API_AUDIENCE,
        }
    return Response({"oidc": offered})


@extend_schema(responses=ProfileSerializer, tags=["auth"])
@api_view(["GET"])
def profile_view(request: Request) -> Response:
    """The signed-in person: where their identity comes from, the provider's groups at their last single
    sign-on, and the organizations and teams they belong to (and which of those the mapping granted)."""
    user = request.user
    if getattr(user, "pk", None) is None:
        raise PermissionDenied("Service accounts have no profile.")
    identity = Identity.objects.filter(user=user).first()
    return Response(
        {
            "user": _user_data(user),
            "source": identity.source if identity else IdentitySource.LOCAL,
            "issuer": identity.issuer if identity else "",
            "idp_groups": identity.idp_groups if identity else [],
            "last_sso_login_at": identity.last_sso_login_at if identity else None,
            "organizations": [
                {
                    "id": membership.organization_id,
                    "name": membership.organization.name,
                    "is_org_admin": membership.is_org_admin,
                    "from_idp": membership.from_idp,
                }
                for membership in OrgMembership.objects.filter(user=user).select_related("organization")
            ],
            "teams": [
                {
                    "id": membership.team_id,
                    "name": membership.team.name,
                    "organization": membership.team.organization.name,
                    "role": membership.role,
                    "from_idp": membership.from_idp,
                }
                for membership in Membership.objects.filter(user=user).select_related("team__organization")
            ],
        }
    )


@extend_schema(responses=OverviewSerializer, tags=["overview"])
@api_view(["GET"])
def overview_view(request: Request) -> Response:
    last_heartbeat = read_worker_heartbeat()
    fresh_after = datetime.now(UTC) - timedelta(seconds=HEARTBEAT_TTL_SECONDS)
    return Response(
        {
            "version": product_version(),
            "worker": {
                "alive": bool(last_heartbeat and last_heartbeat > fresh_after),
                "last_heartbeat": last_heartbeat,
            },
        }
    )


@cache
def product_version() -> str:
    """The version in pyproject.toml: the product runs from a checkout, not from an installed wheel."""
    with (settings.BASE_DIR / "pyproject.toml").open("rb") as pyproject:
        return tomllib.load(pyproject)["project"]["version"]
