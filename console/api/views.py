"""Session login/logout for the browser console, and the overview the home page shows."""

import tomllib
from datetime import UTC, datetime, timedelta
from functools import cache

from django.conf import settings
from django.contrib.auth import authenticate, login, logout
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes, throttle_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from console.api.serializers import (
    LoginInputSerializer,
    LoginOutputSerializer,
    OverviewSerializer,
    SessionSerializer,
)
from controlplane.core.api.authentication import enforce_csrf
from controlplane.core.api.errors import error_body
from controlplane.core.api.throttling import LoginRateThrottle
from controlplane.core.services import HEARTBEAT_TTL_SECONDS, read_worker_heartbeat


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
    user = authenticate(request._request, **credentials.validated_data)
    if user is None:
        return Response(
            error_body("invalid_credentials", "The username or password is not correct."),
            status=status.HTTP_400_BAD_REQUEST,
        )
    login(request._request, user)
    return Response({"user": _user_data(user)})


@extend_schema(request=None, responses={204: None}, tags=["auth"])
@api_view(["POST"])
@permission_classes([AllowAny])
def logout_view(request: Request) -> Response:
    enforce_csrf(request)
    logout(request._request)
    return Response(status=status.HTTP_204_NO_CONTENT)


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
