"""`Authorization: Bearer shk_…` API keys, next to the console's session authentication."""

from dataclasses import dataclass

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, SessionAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.accounts.services import authenticate_api_key


@dataclass(frozen=True)
class ServiceAccountUser:
    """request.user for a service account's key: authenticated, but no Django user and no admin rights."""

    service_account: ServiceAccount
    email: str = ""
    is_authenticated: bool = True
    is_anonymous: bool = False
    is_active: bool = True
    is_staff: bool = False
    is_superuser: bool = False
    pk: None = None
    id: None = None

    @property
    def username(self) -> str:
        return f"service-account:{self.service_account.name}"

    def get_username(self) -> str:
        return self.username


def _bearer_token(request: Request) -> bytes | None:
    parts = get_authorization_header(request).split()
    if not parts or parts[0].lower() != b"bearer":
        return None
    if len(parts) != 2:
        raise AuthenticationFailed("Send the key as `Authorization: Bearer <key>`.", code="invalid_api_key")
    return parts[1]


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[object, ApiKey] | None:
        token = _bearer_token(request)
        if token is None:
            return None
        api_key = authenticate_api_key(raw_token=token.decode("latin-1"))
        if api_key is None:
            raise AuthenticationFailed(
                "The API key is unknown, expired, revoked or rotated out.", code="invalid_api_key"
            )
        if api_key.service_account_id is not None:
            return ServiceAccountUser(api_key.service_account), api_key
        return api_key.user, api_key

    def authenticate_header(self, request: Request) -> str:
        # Missing or invalid credentials are a 401 with this challenge for every caller (the console treats
        # 401 as "sign in again"); 403 is kept for authenticated callers who may not do what they asked.
        return 'Bearer realm="api"'


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = ApiKeyAuthentication
    name = "apiKey"

    def get_security_definition(self, auto_schema: object) -> dict:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "shk_<key id>_<secret>",
            "description": "A REST API key (`secret` of the create response, `shk_<key id>_<secret>`), shown "
            "once when it is created. The schema registry takes it as HTTP Basic `<key_id>:<secret>` or "
            "`<secret>:`.",
        }


def enforce_csrf(request: Request) -> None:
    """DRF checks CSRF only for already-authenticated sessions; login and logout need it too
    (a forged login would sign a victim in to the attacker's account)."""
    SessionAuthentication().enforce_csrf(request._request)
