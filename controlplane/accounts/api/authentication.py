"""`Authorization: Bearer shk_…` API keys (settings' DEFAULT_AUTHENTICATION_CLASSES, next to the console's
session): the request's `auth` is the ApiKey, which says how its caller acts (tenancy.access.Credentials)."""

from dataclasses import dataclass

from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from controlplane.accounts.models import ApiKey, ServiceAccount
from controlplane.accounts.services import authenticate_api_key
from controlplane.core.api.authentication import BearerAuthentication, BearerScheme, bearer_token


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


class ApiKeyAuthentication(BearerAuthentication):
    def authenticate(self, request: Request) -> tuple[object, ApiKey] | None:
        token = bearer_token(request)
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


class ApiKeyAuthenticationScheme(BearerScheme):
    target_class = ApiKeyAuthentication
    name = "apiKey"
    bearer_format = "shk_<key id>_<secret>"
    description = (
        "A REST API key (`secret` of the create response, `shk_<key id>_<secret>`), shown once when it is "
        "created. The schema registry takes it as HTTP Basic `<key_id>:<secret>` or `<secret>:`."
    )
