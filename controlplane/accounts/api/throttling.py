"""Request rates per API key and per signed-in person (rates: API_KEY_RATE / USER_RATE settings)."""

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from controlplane.accounts.models import ApiKey


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Each key has its own budget, so one runaway script does not starve its owner's other keys."""

    scope = "api_key"

    def get_cache_key(self, request: Request, view: object) -> str | None:
        if not isinstance(request.auth, ApiKey):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.key_id}


class SessionUserRateThrottle(SimpleRateThrottle):
    """A person's budget, for every caller but API keys (they have their own, above)."""

    scope = "user"

    def get_cache_key(self, request: Request, view: object) -> str | None:
        if isinstance(request.auth, ApiKey) or not request.user or not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}
