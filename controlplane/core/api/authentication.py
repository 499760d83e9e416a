"""`Authorization: Bearer shk_…` API keys, next to the console's session authentication."""

from dataclasses import dataclass

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, SessionAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.accounts.services import authenticate_api_key
from controlplane.people import oidc
from controlplane.people.choices import IdentitySource
from controlplane.people.models import Identity


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


@dataclass(frozen=True)
class IdpAccessToken:
    """request.auth for a person's script calling with the identity provider's access token."""

    claims: dict


class IdpAccessTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer <JWT>` issued by the single sign-on provider for this API (its audience is
    OIDC_API_AUDIENCE): the person it names (by issuer and subject, signed in to the console at least once)
    acts with their own roles. Off while OIDC_API_AUDIENCE is empty; API keys (`shk_…`) pass on to the next
    class untouched."""

    def authenticate(self, request: Request) -> tuple[object, IdpAccessToken] | None:
        config = oidc.current_config()
        if config is None or not settings.OIDC_API_AUDIENCE:
            return None
        token = _bearer_token(request)
        if token is None or token.startswith(b"shk_") or token.count(b".") != 2:
            return None
        try:
            claims = oidc.verify_access_token(
                config, token.decode("ascii"), audience=settings.OIDC_API_AUDIENCE
            )
        except (oidc.OidcError, UnicodeDecodeError) as error:
            raise AuthenticationFailed(str(error), code="invalid_token") from error
        identity = (
            Identity.objects.select_related("user")
            .filter(source=IdentitySource.OIDC, issuer=config.issuer, subject=claims["sub"])
            .first()
        )
        if identity is None or not identity.user.is_active:
            raise AuthenticationFailed(
                "No active person here has this token's subject; sign in to the console once first.",
                code="invalid_token",
            )
        return identity.user, IdpAccessToken(claims)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


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


class IdpAccessTokenAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = IdpAccessTokenAuthentication
    name = "idpAccessToken"

    def get_security_definition(self, auto_schema: object) -> dict:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An access token of the single sign-on provider issued for this API's audience "
            "(OIDC_API_AUDIENCE), when enabled; it acts as the person it names.",
        }


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
