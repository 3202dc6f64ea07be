"""Settings for the GPU Selection Workbench, read from environment variables only.

Development needs no variable at all: SQLite under var/ and an embedded, file-based Celery
broker. `DJANGO_ENV=production` switches to hardened settings and refuses to start without a
real secret key and allowed hosts. Every variable is documented in README.md.
"""

import os
from datetime import timedelta
from ipaddress import ip_network
from pathlib import Path

import dj_database_url
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _
from kombu import Queue

from workbench.env import (
    ImproperEnvironment,
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_str,
    variables_set,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("WORKBENCH_VAR_DIR", str(BASE_DIR / "var")))

DJANGO_ENV = env_choice("DJANGO_ENV", "development", ("development", "production"))
PRODUCTION = DJANGO_ENV == "production"

DEBUG = env_bool("DEBUG", default=not PRODUCTION)

_DEV_SECRET = "django-insecure-development-only-key-never-use-in-production"
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if PRODUCTION:
        raise ImproperEnvironment("SECRET_KEY must be set when DJANGO_ENV=production")
    SECRET_KEY = _DEV_SECRET

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost"])
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperEnvironment("ALLOWED_HOSTS must be set when DJANGO_ENV=production")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

PORT = env_int("PORT", 8000, minimum=1)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "drf_spectacular",
    "axes",
    "workbench",
    "evaluations",
    "poc.probes",
    "poc",
    "reports.procurement",
    "reports",
]

MIDDLEWARE = [
    "workbench.metrics.MetricsMiddleware",  # first: it times everything below
    "workbench.logs.RequestIdMiddleware",
    "workbench.middleware.HealthProbeMiddleware",  # first: probes come by IP and plain HTTP
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "workbench.middleware.UploadLimitMiddleware",  # before anything reads the body
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "workbench.middleware.ServiceRefusalMiddleware",
    "axes.middleware.AxesMiddleware",  # last: it answers locked-out logins
]

# Content-Security-Policy on every page: scripts and style sheets from this server only, no
# inline script or event handler (HTMX is configured not to evaluate or inject any); style
# attributes are allowed (progress bars). A view that sets its own policy keeps it.
SECURE_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "style-src-attr": [CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one user from one
# address, that pair is locked out for AXES_COOLOFF_MINUTES; staff unlock it in the admin
# (Access attempts: delete the row) or with `manage.py axes_reset_username USER`.
#
# The password form asks local accounts, then the LDAP directory; OIDC answers only its callback
# and declines until configured. The LDAP backend is listed only when LDAP is configured: its
# packages are an optional extra (evaluations.sso.extra), not installed by default.
LDAP_BACKEND = "evaluations.sso.ldap.DirectoryBackend"
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "evaluations.sso.local.LocalAccountsBackend",
    "evaluations.sso.oidc.OidcBackend",
]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Axes counts wrong passwords (local accounts and LDAP alike); an OIDC callback carries no user
# name or password, and the identity provider throttles its own sign-in page.
AXES_WHITELIST_CALLABLE = "evaluations.sso.local.axes_exempt"

# Single sign-on (evaluations/sso/): OpenID Connect and LDAP beside local accounts, each off
# until configured. SSO_GROUP_ROLES maps a directory or IdP group to team roles in projects,
# applied at each SSO login. README.md "Single sign-on" describes every variable.
LOCAL_ACCOUNTS = env_bool("LOCAL_ACCOUNTS", default=True)
SSO_TIMEOUT_S = 3  # each request to an identity provider or directory, at start-up and login

OIDC_ISSUER = env_str("OIDC_ISSUER").strip().rstrip("/")
OIDC_CLIENT_ID = env_str("OIDC_CLIENT_ID").strip()
OIDC_CLIENT_SECRET = env_str("OIDC_CLIENT_SECRET")
OIDC_SCOPES = env_str("OIDC_SCOPES", "openid email profile").strip()
OIDC_GROUPS_CLAIM = env_str("OIDC_GROUPS_CLAIM", "groups").strip()
OIDC_BUTTON_LABEL = env_str("OIDC_BUTTON_LABEL").strip()
OIDC_SIGN_ALGO = env_str("OIDC_SIGN_ALGO", "RS256").strip()
# Logging out here also ends the session at the provider (RP-initiated logout), where its
# discovery document names an end_session_endpoint (or OIDC_END_SESSION_ENDPOINT is given).
OIDC_PROVIDER_LOGOUT = env_bool("OIDC_PROVIDER_LOGOUT", default=True)
OIDC_END_SESSION_ENDPOINT = env_str("OIDC_END_SESSION_ENDPOINT").strip()
# The ID token is kept in the session for that logout's hint (mozilla-django-oidc's setting).
OIDC_STORE_ID_TOKEN = True
# Endpoints found by discovery (OIDC_ISSUER/.well-known/openid-configuration) unless given.
OIDC_ENDPOINTS = {
    "authorization_endpoint": env_str("OIDC_AUTHORIZATION_ENDPOINT").strip(),
    "token_endpoint": env_str("OIDC_TOKEN_ENDPOINT").strip(),
    "userinfo_endpoint": env_str("OIDC_USERINFO_ENDPOINT").strip(),
    "jwks_uri": env_str("OIDC_JWKS_URI").strip(),
}
if OIDC_ISSUER:
    if not OIDC_ISSUER.startswith(("https://", "http://")):
        raise ImproperEnvironment(f"OIDC_ISSUER={OIDC_ISSUER!r} is not an http(s) URL")
    if PRODUCTION and not OIDC_ISSUER.startswith("https://"):
        raise ImproperEnvironment("OIDC_ISSUER must be an https:// URL in production")
    for _name, _value in (
        ("OIDC_CLIENT_ID", OIDC_CLIENT_ID),
        ("OIDC_CLIENT_SECRET", OIDC_CLIENT_SECRET),
    ):
        if not _value:
            raise ImproperEnvironment(f"{_name} must be set with OIDC_ISSUER")
    if "openid" not in OIDC_SCOPES.split():
        raise ImproperEnvironment(f"OIDC_SCOPES={OIDC_SCOPES!r} must include openid")
    if OIDC_SIGN_ALGO not in ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512"):
        raise ImproperEnvironment(
            f"OIDC_SIGN_ALGO={OIDC_SIGN_ALGO!r} must be one of RS256, RS384, RS512, ES256, "
            "ES384, ES512"
        )
    if not OIDC_GROUPS_CLAIM:
        raise ImproperEnvironment("OIDC_GROUPS_CLAIM must not be empty")
    if OIDC_PROVIDER_LOGOUT:
        # The logout form's answer redirects on to the provider's end-session endpoint, and
        # browsers hold a form's redirects to form-action as well.
        for _url in (OIDC_ISSUER, OIDC_END_SESSION_ENDPOINT):
            _origin = "/".join(_url.split("/", 3)[:3])
            if _url and _origin not in SECURE_CSP["form-action"]:
                SECURE_CSP["form-action"].append(_origin)
# mozilla-django-oidc reads these; the endpoints come from evaluations.sso.oidc at run time.
OIDC_RP_CLIENT_ID = OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = OIDC_CLIENT_SECRET
OIDC_RP_SCOPES = OIDC_SCOPES
OIDC_RP_SIGN_ALGO = OIDC_SIGN_ALGO
OIDC_USE_PKCE = True
OIDC_TIMEOUT = SSO_TIMEOUT_S

LDAP_SERVER_URI = env_str("LDAP_SERVER_URI").strip()
# Which LDAP_* variables the environment sets: any of them without the LDAP extra installed
# stops start-up (evaluations.sso.extra.ldap_extra_check).
LDAP_VARIABLES_SET = variables_set("LDAP_")
LDAP_BIND_DN = env_str("LDAP_BIND_DN").strip()
LDAP_BIND_PASSWORD = env_str("LDAP_BIND_PASSWORD")
LDAP_USER_SEARCH_BASE = env_str("LDAP_USER_SEARCH_BASE").strip()
LDAP_USER_FILTER = env_str("LDAP_USER_FILTER", "(uid=%(user)s)").strip()
LDAP_USER_DN_TEMPLATE = env_str("LDAP_USER_DN_TEMPLATE").strip()
LDAP_GROUP_SEARCH_BASE = env_str("LDAP_GROUP_SEARCH_BASE").strip()
LDAP_GROUP_TYPE = env_choice("LDAP_GROUP_TYPE", "groupofnames", ("groupofnames", "posixgroup"))
LDAP_START_TLS = env_bool("LDAP_START_TLS", default=False)
# How often the beat compares the directory with the accounts that signed in through it
# (evaluations.sso.ldap.directory_sync); 0: only at each person's login.
LDAP_SYNC_MINUTES = env_int("LDAP_SYNC_MINUTES", 60, minimum=0)
if LDAP_SERVER_URI:
    for _uri in LDAP_SERVER_URI.split():
        if not _uri.startswith(("ldap://", "ldaps://")):
            raise ImproperEnvironment(
                f"LDAP_SERVER_URI={LDAP_SERVER_URI!r}: {_uri!r} is not an ldap:// or ldaps:// URI"
            )
    if LDAP_BIND_DN and not LDAP_BIND_PASSWORD:
        raise ImproperEnvironment("LDAP_BIND_PASSWORD must be set with LDAP_BIND_DN")
    if LDAP_USER_DN_TEMPLATE:
        if "%(user)s" not in LDAP_USER_DN_TEMPLATE:
            raise ImproperEnvironment(
                f"LDAP_USER_DN_TEMPLATE={LDAP_USER_DN_TEMPLATE!r} must contain %(user)s"
            )
    elif not LDAP_USER_SEARCH_BASE:
        raise ImproperEnvironment(
            "LDAP_USER_SEARCH_BASE (or LDAP_USER_DN_TEMPLATE) must be set with LDAP_SERVER_URI"
        )
    elif "%(user)s" not in LDAP_USER_FILTER:
        raise ImproperEnvironment(f"LDAP_USER_FILTER={LDAP_USER_FILTER!r} must contain %(user)s")
    AUTHENTICATION_BACKENDS.insert(2, LDAP_BACKEND)
# django-auth-ldap reads AUTH_LDAP_*: evaluations.sso.ldap builds them from the LDAP_* above.

# SSO_GROUP_ROLES: {"group": [{"project": "slug", "role": "ops", "admin": false}, ...], ...}
SSO_TEAM_ROLES = ("platform", "ops", "procurement", "business", "architecture", "observer")


def _sso_group_roles(raw: str) -> dict[str, list[dict[str, object]]]:
    import json

    def bad(why: str) -> ImproperEnvironment:
        return ImproperEnvironment(f"SSO_GROUP_ROLES: {why}")

    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise bad(f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise bad('must be an object: {"group": [{"project": ..., "role": ...}], ...}')
    mapping: dict[str, list[dict[str, object]]] = {}
    for group, grants in value.items():
        if not group.strip():
            raise bad("a group name is empty")
        if not isinstance(grants, list):
            raise bad(f"{group!r} must map to a list of grants")
        mapping[group] = []
        for grant in grants:
            if not isinstance(grant, dict) or set(grant) - {"project", "role", "admin"}:
                raise bad(f"{group!r}: each grant is {{project, role, admin}}, not {grant!r}")
            project, role = grant.get("project"), grant.get("role")
            admin = grant.get("admin", False)
            if not isinstance(project, str) or not project.strip():
                raise bad(f"{group!r}: a grant has no project slug")
            if role not in SSO_TEAM_ROLES:
                raise bad(f"{group!r}: role {role!r} is not one of {', '.join(SSO_TEAM_ROLES)}")
            if not isinstance(admin, bool):
                raise bad(f"{group!r}: admin must be true or false, not {admin!r}")
            mapping[group].append({"project": project.strip(), "role": role, "admin": admin})
    return mapping


_group_roles_raw = env_str("SSO_GROUP_ROLES").strip()
SSO_GROUP_ROLES = _sso_group_roles(_group_roles_raw) if _group_roles_raw else {}
if SSO_GROUP_ROLES and LDAP_SERVER_URI and not LDAP_GROUP_SEARCH_BASE:
    # Without it every LDAP login would find no group and take the mapped roles away.
    raise ImproperEnvironment("LDAP_GROUP_SEARCH_BASE must be set with SSO_GROUP_ROLES")

if env_bool("WORKBENCH_QUERY_STATS", default=False):
    MIDDLEWARE.insert(0, "workbench.middleware.QueryStatsMiddleware")
if PRODUCTION:  # runserver serves static files in development
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
        "whitenoise.middleware.WhiteNoiseMiddleware",
    )

ROOT_URLCONF = "workbench.urls"
WSGI_APPLICATION = "workbench.wsgi.application"
ASGI_APPLICATION = "workbench.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: DATABASE_URL, else a SQLite file under var/ so one machine needs no server.
_database_url = env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'workbench.sqlite3'}"
try:
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=60)}
except Exception as exc:  # dj-database-url raises several types for a malformed URL
    raise ImproperEnvironment(
        f"DATABASE_URL={_database_url!r} is not a database URL: {exc}"
    ) from exc
# A kept connection is checked before each request reuses it: after a database restart the
# first request opens a new one instead of failing on the dead one.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "evaluations:project_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = env_str("LANGUAGE_CODE", "en")
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
STORAGES: dict[str, dict[str, object]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Evidence files: the size limit, and optional S3-compatible storage through django-storages.
EVIDENCE_MAX_BYTES = env_int("EVIDENCE_MAX_MB", 50, minimum=1) * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
_s3_bucket = env_str("EVIDENCE_S3_BUCKET")
if _s3_bucket:
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": _s3_bucket,
            "endpoint_url": env_str("EVIDENCE_S3_ENDPOINT_URL") or None,
            "region_name": env_str("EVIDENCE_S3_REGION") or None,
            "access_key": env_str("EVIDENCE_S3_ACCESS_KEY_ID") or None,
            "secret_key": env_str("EVIDENCE_S3_SECRET_ACCESS_KEY") or None,
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }

# Sealing procurement sheets: the organisation's certificate and key (PKCS#12). Development
# uses a self-signed one that `make run` creates; production must bring its own.
SHEET_SIGNING_P12 = env_str(
    "SHEET_SIGNING_P12", "" if PRODUCTION else str(VAR_DIR / "signing" / "dev-signing.p12")
)
SHEET_SIGNING_PASSPHRASE = env_str(
    "SHEET_SIGNING_PASSPHRASE", "" if PRODUCTION else "workbench-dev"
)

# Cluster probes. Credentials are encrypted under these keys (poc/probes/credentials.py): ID:KEY
# pairs, the first one encrypting; development makes one under var/ when unset. Probes connect
# only to the networks and host names listed here (CIDRs or names; empty: none).
WORKBENCH_CREDENTIALS_KEYS = env_str("WORKBENCH_CREDENTIALS_KEYS")
# The project history's chain is keyed (HMAC-SHA-256) under these keys (evaluations/audit.py):
# ID:KEY pairs, the first one keying new entries, every one verifying; development makes one
# under var/ when unset. Keep them apart from the database and from its backups.
WORKBENCH_AUDIT_KEYS = env_str("WORKBENCH_AUDIT_KEYS")
PROBE_ALLOWED_NETWORKS = env_list(
    "PROBE_ALLOWED_NETWORKS", [] if PRODUCTION else ["127.0.0.0/8", "::1/128"]
)
# A slurmrestd JWT is a bearer credential: over plain http:// anyone on the path reads it. In
# production a Slurm cluster at an http:// address is refused unless this says it may (a
# loopback or otherwise trusted link); in development it is allowed.
SLURM_TOKEN_OVER_HTTP = env_bool("SLURM_TOKEN_OVER_HTTP", not PRODUCTION)
PROBE_SOFT_TIME_LIMIT = env_int("PROBE_SOFT_TIME_LIMIT", 900, minimum=10)
# Sheet work that meets a passing failure (database connection, storage) retries after this
# many seconds, doubling each time (reports.tasks).
SHEET_RETRY_SECONDS = env_int("SHEET_RETRY_SECONDS", 15, minimum=1)
# A sheet with more rows than this (results matrix cells and evidence index lines) is laid out
# in parts, one after another, so that rendering it needs the memory of one part, not of the
# whole document (reports.pdfparts); 0: always one document.
SHEET_PARTS_ABOVE = env_int("SHEET_PARTS_ABOVE", 4000, minimum=0)
# What the files embedded in one sheet (its full record: results, evidence index, snapshot,
# probe facts, costs) may add up to; a larger record fails the render, saying the sizes.
SHEET_ATTACHMENTS_MAX_BYTES = env_int(
    "SHEET_ATTACHMENTS_MAX_BYTES", 200 * 1024 * 1024, minimum=1024 * 1024
)
# Revisions waiting for the worker at once, per person (over every project) and on the whole
# instance (about twice what the workers lay out at once: Celery runs one per core by default);
# one more is refused, saying which cap it met (reports/render_caps.py).
SHEET_RENDERS_PER_PERSON = env_int("SHEET_RENDERS_PER_PERSON", 3, minimum=1)
SHEET_RENDERS_PER_INSTANCE = env_int(
    "SHEET_RENDERS_PER_INSTANCE", 2 * max(1, os.cpu_count() or 1), minimum=1
)
# How long the API remembers an Idempotency-Key's response for replays.
IDEMPOTENCY_KEEP_HOURS = env_int("IDEMPOTENCY_KEEP_HOURS", 48, minimum=1)
PROBE_CONCURRENCY = env_int("PROBE_CONCURRENCY", 16, minimum=1)
PROBE_COMMAND_TIMEOUT = env_int("PROBE_COMMAND_TIMEOUT", 60, minimum=1)

# A sealed sheet sent to be verified may be this large (the browser's form and the API).
SHEET_VERIFY_MAX_BYTES = 100 * 1024 * 1024
# An acceptance suite imported from CSV or YAML.
SUITE_IMPORT_MAX_BYTES = 2 * 1024 * 1024

# The API: bearer tokens for CI, the browser session for people; one rate budget per caller.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_MB", 20, minimum=1) * 1024 * 1024
# Django refuses larger bodies before a view sees them (an HTML 400): let the API's own limit,
# which answers 413 in JSON, be the one that counts.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(DATA_UPLOAD_MAX_MEMORY_SIZE, API_MAX_BODY_BYTES + 64 * 1024)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "evaluations.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["evaluations.api.parsers.DepthSafeJSONParser"],
    "DEFAULT_THROTTLE_CLASSES": ["evaluations.api.throttling.CallerRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"caller": env_str("API_THROTTLE_RATE", "600/minute")},
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "evaluations.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "GPU Selection Workbench API",
    "DESCRIPTION": "Post PoC results from CI pipelines and read evaluation projects.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "/static/vendor/swagger-ui",
    "SWAGGER_UI_FAVICON_HREF": "data:,",
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # Several models have a `status`: each choice set gets its own name in the schema.
    "ENUM_NAME_OVERRIDES": {
        "SheetStatusEnum": "reports.models.SheetStatus",
        "ProbeStatusEnum": "poc.probes.models.ProbeStatus",
        "SupportStatusEnum": "reports.procurement.models.Support",
    },
}

# Cache (API rate limits): Redis when configured, else per-process memory.
if REDIS_URL := env_str("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "workbench"),
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Prometheus metrics at /metrics: a bearer token, or addresses allowed to scrape without one.
METRICS_TOKEN = env_str("METRICS_TOKEN")
METRICS_ALLOWED_NETWORKS = env_list(
    "METRICS_ALLOWED_NETWORKS", [] if PRODUCTION else ["127.0.0.0/8", "::1/128"]
)
for _network in METRICS_ALLOWED_NETWORKS:
    try:
        ip_network(_network, strict=False)
    except ValueError as _exc:
        raise ImproperEnvironment(f"METRICS_ALLOWED_NETWORKS: {_exc}") from None

# E-mail: notices about sheets (awaiting a decision, rejected, sealed, outdated). Development
# prints them on the console; production sends through SMTP at EMAIL_HOST.
_mail_backend = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if PRODUCTION
    else "django.core.mail.backends.console.EmailBackend",
)
_mail_options: dict[str, object] = {}
if _mail_backend.endswith("smtp.EmailBackend"):
    _mail_options = {
        "host": env_str("EMAIL_HOST", "localhost"),
        "port": env_int("EMAIL_PORT", 25, minimum=1),
        "username": env_str("EMAIL_HOST_USER"),
        "password": env_str("EMAIL_HOST_PASSWORD"),
        "use_tls": env_bool("EMAIL_USE_TLS", default=False),
        "timeout": 10,
    }
MAILERS = {"default": {"BACKEND": _mail_backend, "OPTIONS": _mail_options}}
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "GPU Selection Workbench <workbench@localhost>")
# Links in e-mails point here (no request to take the host from).
WORKBENCH_BASE_URL = env_str("WORKBENCH_BASE_URL", f"http://127.0.0.1:{PORT}").rstrip("/")

# Celery: Redis when configured, else kombu's filesystem transport under var/broker/.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or REDIS_URL or "filesystem://"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL == "filesystem://":
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # kombu's default for the exchange tables is ./control, relative to wherever it runs.
        "control_folder": str(_broker_dir / "control"),
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "store_processed": False,
    }
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "default")
CELERY_TASK_ROUTES = {"reports.tasks.*": {"queue": "reports"}, "poc.tasks.*": {"queue": "probes"}}
# Celery beat: due cluster schedules and lost probe runs, every minute.
CELERY_BEAT_SCHEDULE = {
    "probe-schedule": {"task": "poc.tasks.probe_schedule_task", "schedule": 60.0},
    # Notices not yet sent (the broker was down, the mail server refused), and open revisions
    # that have become outdated since they were frozen.
    "sheet-notices": {"task": "reports.tasks.notices_task", "schedule": 60.0},
    # Sealed decisions whose review-by date came or that something reopened (reports.review).
    "decision-review": {"task": "reports.tasks.decisions_review_task", "schedule": 3600.0},
    # Sheet renders and seals the broker could not take when they were asked for.
    "sheet-resend": {"task": "reports.tasks.sheets_resend_task", "schedule": 60.0},
    # Sheet renders and seals lost with their message or worker, queued again.
    "sheet-recovery": {"task": "reports.tasks.sheets_recover_task", "schedule": 300.0},
    # Each project's phase, moved on with its state (framing -> ... -> decided).
    "project-phases": {"task": "reports.tasks.project_phases_task", "schedule": 60.0},
    # Responses kept for Idempotency-Key replays, forgotten after IDEMPOTENCY_KEEP_HOURS.
    "idempotency-prune": {"task": "evaluations.tasks.idempotency_prune_task", "schedule": 3600.0},
}
if LDAP_SERVER_URI and LDAP_SYNC_MINUTES > 0:
    # People gone from the directory lose access, and roles follow groups, between logins.
    CELERY_BEAT_SCHEDULE["directory-sync"] = {
        "task": "evaluations.tasks.directory_sync_task",
        "schedule": LDAP_SYNC_MINUTES * 60.0,
    }
# Declared, not only routed to: a purge (and a worker without -Q) then knows every queue.
CELERY_TASK_QUEUES = [
    Queue(name) for name in dict.fromkeys((CELERY_TASK_DEFAULT_QUEUE, "reports", "probes"))
]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The worker logs through LOGGING above (JSON, request ids), not a root logger of its own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Logs: one line per record, as JSON for log collectors (the default in production) or plain;
# each carries the request id that the request, and the tasks it queued, share.
LOG_FORMAT = env_choice("LOG_FORMAT", "json" if PRODUCTION else "plain", ("json", "plain"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "workbench.logs.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        "json": {"()": "workbench.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO").upper()},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Self-signed development certificates are expected; the verifier reports trust itself.
        "pyhanko": {"level": "ERROR"},
        "fontTools": {"level": "WARNING"},
        "weasyprint": {"level": "ERROR"},
    },
}

if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if env_bool("USE_X_FORWARDED_PROTO", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
