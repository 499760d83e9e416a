from django.db import models


class ActorType(models.TextChoices):
    USER = "user", "User"
    SERVICE_ACCOUNT = "service_account", "Service account"
    SYSTEM = "system", "System"


class Via(models.TextChoices):
    SESSION = "session", "Console session"
    API_KEY = "api_key", "API key"
    ACCESS_TOKEN = "access_token", "Identity provider access token"
    SYSTEM = "system", "System"


class Result(models.TextChoices):
    SUCCESS = "success", "Success"
    FAILURE = "failure", "Failure"
    # The cluster did not answer in time and did not show the change when read back: it may still happen.
    UNKNOWN = "unknown", "Outcome unknown"
