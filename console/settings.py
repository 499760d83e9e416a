"""Settings, all from environment variables (12-factor). Defaults run everything on one machine.

See the configuration table in README.md for every variable.
"""

import os
import secrets
from pathlib import Path

import dj_database_url

from console.schedules import BEAT_SCHEDULE
from controlplane.core.outbound import parse_networks
from controlplane.lag.intervals import sampling_interval_seconds
from controlplane.people.mapping import parse_mapping_rules

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# Where the embedded defaults keep their state: SQLite file, Redis dump, generated secret key, local clusters.
DATA_DIR = Path(os.environ.get("STREAMHUB_DATA_DIR", BASE_DIR / "var")).resolve()


def _load_or_create_secret_key() -> str:
    """A stable secret for the embedded single-machine run: generated once, stored with mode 0600."""
    key_file = DATA_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key


SECRET_KEY = os.environ.get("SECRET_KEY") or _load_or_create_secret_key()
DEBUG = env_bool("DEBUG")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

# TLS is terminated in front of Django in production; USE_TLS turns on every HTTPS-only protection.
USE_TLS = env_bool("USE_TLS")
SESSION_COOKIE_SECURE = USE_TLS
CSRF_COOKIE_SECURE = USE_TLS
SECURE_SSL_REDIRECT = USE_TLS
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000" if USE_TLS else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = USE_TLS
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD")
# Behind a trusted reverse proxy the audit log records the client address it forwards, not its own.
TRUST_X_FORWARDED_FOR = env_bool("TRUST_X_FORWARDED_FOR")
if env_bool("TRUST_X_FORWARDED_PROTO"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# HSTS preload is a one-way commitment for a whole domain: operators opt in with SECURE_HSTS_PRELOAD.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "console",
    "controlplane.core",
    "controlplane.tenancy",
    "controlplane.people",
    "controlplane.accounts",
    "controlplane.audit",
    "controlplane.clusters",
    "controlplane.schemas",
    "controlplane.topics",
    "controlplane.acls",
    "controlplane.quotas",
    "controlplane.groups",
    "controlplane.credentials",
    "controlplane.reconcile",
    "controlplane.jobs",
    "controlplane.lag",
    "controlplane.alerts",
    "controlplane.declarative",
    "controlplane.connect",
    "controlplane.replication",
]

MIDDLEWARE = [
    "controlplane.core.request_ids.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "console.sso_views.OidcSessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"
ASGI_APPLICATION = "console.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several web threads and workers write at once. A deferred transaction that read and then writes fails
    # at once with "database is locked" when another writer committed in between (no busy wait can help it):
    # that was the intermittent HTML 500 on concurrent topic create/delete. IMMEDIATE transactions take the
    # write lock when they begin and wait for it (up to `timeout`); WAL lets readers run beside the writer.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        **DATABASES["default"].get("OPTIONS", {}),
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# The React console is built into frontend/dist (index.html + assets/) and served from /static/.
FRONTEND_DIST = BASE_DIR / "frontend" / "dist"
STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", DATA_DIR / "static"))
STATICFILES_DIRS = [FRONTEND_DIST] if FRONTEND_DIST.exists() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Vite fingerprints asset names, so they can be cached forever.
WHITENOISE_IMMUTABLE_FILE_TEST = r"^.+/assets/.+\.[0-9A-Za-z_-]{8,}\.(js|css|svg|woff2?)$"

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 600
CELERY_TASK_SOFT_TIME_LIMIT = 540
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = BEAT_SCHEDULE
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")

# API keys record their last use at most this often, so busy scripts do not turn reads into writes.
API_KEY_LAST_USED_INTERVAL_SECONDS = 60
# Fernet key(s) for credentials stored in the database (comma separated, first encrypts); default: from SECRET_KEY.
FIELD_ENCRYPTION_KEY = os.environ.get("FIELD_ENCRYPTION_KEY", "")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "controlplane.people.api.authentication.IdpAccessTokenAuthentication",
        "controlplane.accounts.api.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["controlplane.core.json_limits.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "controlplane.core.api.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_CLASSES": [
        "controlplane.accounts.api.throttling.ApiKeyRateThrottle",
        "controlplane.accounts.api.throttling.SessionUserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "api_key": os.environ.get("API_KEY_RATE", "600/min"),
        "user": os.environ.get("USER_RATE", "1200/min"),
    },
    "EXCEPTION_HANDLER": "controlplane.core.api.errors.error_response_handler",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "StreamHub API",
    "DESCRIPTION": (
        "Self-service REST API of the managed Kafka service.\n\n"
        "Authenticate with `Authorization: Bearer <secret>`, where `secret` is the API key exactly as the "
        "key API returns it (`shk_<key id>_<secret>`). Missing or invalid credentials get 401 with "
        "`WWW-Authenticate`; 403 means authenticated but not allowed.\n\n"
        "The Confluent-compatible schema registry of cluster `<id>` is at `/clusters/<id>/schema-registry` "
        "(Confluent's wire format, not part of this document). It accepts the same key in either form of "
        "HTTP Basic that Confluent clients send as `basic.auth.user.info`: `<key_id>:<secret>` (the key id "
        "as user name, the `secret` field exactly as returned as password) or `<secret>:` (the whole key as "
        "user name, empty password); `Bearer <secret>` as well."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Enums as components (the default hook), then the refusals every operation can answer.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "controlplane.core.api.schema_hooks.document_error_answers",
        "controlplane.core.api.schema_hooks.bound_query_parameters",
    ],
    # Swagger UI and Redoc assets are served locally, not from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "StatusEnum": "controlplane.accounts.choices.ApiKeyStatus",
        "ClusterStatusEnum": "controlplane.clusters.choices.ClusterStatus",
        "BrokerStatusEnum": "controlplane.clusters.choices.BrokerStatus",
        "EngineEnum": "controlplane.clusters.choices.Engine",
        "ProvisionedEngineEnum": "controlplane.clusters.choices.PROVISIONED_ENGINE_CHOICES",
        "AclResourceTypeEnum": "controlplane.acls.choices.AclResourceType",
        "ResourceTypeEnum": "controlplane.tenancy.choices.PrefixResourceType",
        "HealthEnum": "controlplane.lag.observations.Health",
        "AlertMetricEnum": "controlplane.alerts.choices.Metric",
        "ConnectorStateEnum": "controlplane.connect.choices.ConnectorState",
        "ConnectClusterStatusEnum": "controlplane.connect.choices.ConnectClusterStatus",
        "ConnectWorkerStatusEnum": "controlplane.connect.choices.WorkerStatus",
        "ReplicationFlowStateEnum": "controlplane.replication.choices.FlowState",
        "ReplicationPolicyEnum": "controlplane.replication.choices.ReplicationPolicy",
        "AlertComparisonEnum": "controlplane.alerts.choices.Comparison",
        "AlertGranularityEnum": "controlplane.alerts.choices.Granularity",
        "AlertSeverityEnum": "controlplane.alerts.choices.Severity",
        "AlertStateEnum": "controlplane.alerts.choices.AlertState",
        "ChannelKindEnum": "controlplane.alerts.choices.ChannelKind",
        "NotificationKindEnum": "controlplane.alerts.choices.NotificationKind",
        "NotificationStatusEnum": "controlplane.alerts.choices.NotificationStatus",
        "JobEnum": "controlplane.jobs.choices.JobName",
        "StreamingJobEnum": "controlplane.jobs.choices.StreamingJobName",
    },
}

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "controlplane.core.request_ids.RequestIdLogFilter"}},
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["request_id"]}
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")

# People (controlplane.people): how long an invitation and an admin-triggered password reset link work.
INVITE_LINK_TTL_HOURS = float(os.environ.get("INVITE_LINK_TTL_HOURS", "72"))
RESET_LINK_TTL_HOURS = float(os.environ.get("RESET_LINK_TTL_HOURS", "24"))

# Consumer lag (controlplane.lag): how often each cluster is sampled (5-60 s), the window health is judged
# over, the lag below which a growing lag is not yet LAGGING, and how long raw samples stay in Redis.
LAG_SAMPLING_INTERVAL_SECONDS = sampling_interval_seconds()
# The window defaults to two intervals: a stall or a stop shows within two sampling runs of the change.
LAG_HEALTH_WINDOW_SECONDS = float(
    os.environ.get("LAG_HEALTH_WINDOW_SECONDS", str(2 * LAG_SAMPLING_INTERVAL_SECONDS))
)
LAG_LAGGING_MIN_MESSAGES = int(os.environ.get("LAG_LAGGING_MIN_MESSAGES", "100"))
LAG_RAW_RETENTION_SECONDS = int(os.environ.get("LAG_RAW_RETENTION_SECONDS", "3600"))
LAG_MEMBERS_REFRESH_SECONDS = float(os.environ.get("LAG_MEMBERS_REFRESH_SECONDS", "60"))
# Bearer token for GET /metrics (Prometheus); org-admin API keys are accepted too. Empty: tokens refused.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")

# Lag alerts (controlplane.alerts): delivery tries per notification, the first retry's delay (doubling after),
# the HTTP timeout for webhooks, and the sender of alert e-mails (default DEFAULT_FROM_EMAIL).
ALERT_DELIVERY_MAX_ATTEMPTS = int(os.environ.get("ALERT_DELIVERY_MAX_ATTEMPTS", "5"))
ALERT_DELIVERY_BACKOFF_SECONDS = float(os.environ.get("ALERT_DELIVERY_BACKOFF_SECONDS", "5"))
ALERT_DELIVERY_TIMEOUT_SECONDS = float(os.environ.get("ALERT_DELIVERY_TIMEOUT_SECONDS", "10"))
ALERT_EMAIL_FROM = os.environ.get("ALERT_EMAIL_FROM", "")

# Outbound HTTP to user-given URLs (alert webhooks, Slack) refuses loopback, link-local, private, reserved and
# multicast addresses; these comma-separated addresses or CIDR networks are allowed anyway (e.g. an internal
# receiver at 10.1.2.3/32). Empty by default.
OUTBOUND_ALLOWED_NETWORKS = parse_networks(env_list("OUTBOUND_ALLOWED_NETWORKS", ""))

# Message browser (controlplane.topics.browsing): each scan request reads for at most this long (the page
# polls again with the returned cursor), a live tail's poll waits at most MESSAGE_TAIL_WAIT_SECONDS for new
# records, and one scan stops after this many bytes of keys, values and headers. Filters run in a sandbox
# process with this much address space, CPU time, and wall-clock time per batch of records.
MESSAGE_SCAN_POLL_SECONDS = float(os.environ.get("MESSAGE_SCAN_POLL_SECONDS", "2.0"))
MESSAGE_TAIL_WAIT_SECONDS = float(os.environ.get("MESSAGE_TAIL_WAIT_SECONDS", "5"))
MESSAGE_SCAN_MAX_BYTES = int(os.environ.get("MESSAGE_SCAN_MAX_BYTES", str(2 << 30)))
MESSAGE_FILTER_MEMORY_MB = int(os.environ.get("MESSAGE_FILTER_MEMORY_MB", "512"))
MESSAGE_FILTER_CPU_SECONDS = int(os.environ.get("MESSAGE_FILTER_CPU_SECONDS", "120"))
MESSAGE_FILTER_BATCH_SECONDS = float(os.environ.get("MESSAGE_FILTER_BATCH_SECONDS", "2.0"))

# Single sign-on with OpenID Connect (controlplane.people.oidc, .sso): off while OIDC_ISSUER is empty. The
# README's "Single sign-on" section explains each variable with examples for common providers.
OIDC = {
    "issuer": os.environ.get("OIDC_ISSUER", "").strip(),
    "client_id": os.environ.get("OIDC_CLIENT_ID", ""),
    "client_secret": os.environ.get("OIDC_CLIENT_SECRET", ""),
    "scopes": tuple(os.environ.get("OIDC_SCOPES", "openid email profile").split()),
    "provider_name": os.environ.get("OIDC_PROVIDER_NAME", "single sign-on"),
    "username_claim": os.environ.get("OIDC_USERNAME_CLAIM", "preferred_username"),
    "email_claim": os.environ.get("OIDC_EMAIL_CLAIM", "email"),
    "groups_claim": os.environ.get("OIDC_GROUPS_CLAIM", "groups"),
    "clock_skew_seconds": int(os.environ.get("OIDC_CLOCK_SKEW_SECONDS", "60")),
    "timeout_seconds": float(os.environ.get("OIDC_TIMEOUT_SECONDS", "10")),
    "redirect_uri": os.environ.get("OIDC_REDIRECT_URI", ""),
}
if OIDC["issuer"] and not (OIDC["client_id"] and OIDC["client_secret"]):
    raise ValueError("OIDC_ISSUER is set: OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are needed too")
if OIDC["issuer"] and "openid" not in OIDC["scopes"]:
    raise ValueError("OIDC_SCOPES must include openid")
# Mapping rules (a JSON list, inline or in a file): claim values to organizations, teams and roles.
OIDC_MAPPING_RULES = parse_mapping_rules(
    os.environ.get("OIDC_MAPPING_RULES")
    or (
        Path(os.environ["OIDC_MAPPING_RULES_FILE"]).read_text()
        if os.environ.get("OIDC_MAPPING_RULES_FILE")
        else "[]"
    ),
    default_claim=OIDC["groups_claim"],
)
# true: the mapping also takes over (changes roles of, and removes) memberships an admin granted by hand.
OIDC_MANAGE_MANUAL_MEMBERSHIPS = env_bool("OIDC_MANAGE_MANUAL_MEMBERSHIPS")
# Hide the password form: people sign in with the provider, except the break-glass accounts below.
OIDC_HIDE_LOCAL_LOGIN = env_bool("OIDC_HIDE_LOCAL_LOGIN")
# Local accounts that may always sign in with their password (also with local login hidden and while the
# provider is down), on the console's /login?local page.
OIDC_BREAK_GLASS_USERS = env_list("OIDC_BREAK_GLASS_USERS", "")
# The audience of the provider's access tokens the REST API accepts as `Bearer` tokens for people's scripts
# (RFC 9068 JWT access tokens, e.g. Keycloak's client id or an Okta/Entra API identifier). Empty: not accepted.
OIDC_API_AUDIENCE = os.environ.get("OIDC_API_AUDIENCE", "")
# The provider's public client (no secret, device authorization grant, RFC 8628) that `streamhub login` signs
# people in with; offered at /api/v1/auth/cli/ together with OIDC_API_AUDIENCE. Empty: the CLI uses API keys.
OIDC_CLI_CLIENT_ID = os.environ.get("OIDC_CLI_CLIENT_ID", "")
# What the CLI asks for: offline_access brings the refresh token that renews an expired access token.
OIDC_CLI_SCOPES = tuple(os.environ.get("OIDC_CLI_SCOPES", "openid offline_access").split())
