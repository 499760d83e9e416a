"""Request rates of the anonymous endpoints; those of API keys and people are the accounts app's
(controlplane/accounts/api/throttling.py)."""

from rest_framework.throttling import AnonRateThrottle


class LoginRateThrottle(AnonRateThrottle):
    """Slows password guessing from one address (the console's login and the people app's sign-up)."""

    scope = "login"
    rate = "20/min"
