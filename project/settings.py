"""Settings: every deployment-specific value comes from the environment (see README), read with
the readers of project/environment.py; the API's and the pages' fixed settings are their own modules."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import dj_database_url
from corsheaders.defaults import default_headers
from django.core.exceptions import ImproperlyConfigured
from django.utils.functional import SimpleLazyObject

from project import api_settings, page_settings
from project.environment import (
    audit_sink,
    env_bool,
    env_choice,
    env_connections,
    env_cron,
    env_int,
    env_list,
    env_locations,
    env_names,
    env_networks,
    env_pairs,
    env_paths,
    env_patterns,
    env_secret,
    env_str,
    env_true_only,
    is_address,
)
from project.secret_key import load_or_create
from secretsapi import __version__, log_format

BASE_DIR = Path(__file__).resolve().parent.parent


# Importing this module reads the environment (and the files *_FILE variables name) and nothing
# else: it creates no folder or file and generates no key. The data folder (0700) and the SQLite
# file (0600) are made when Django starts (deployment/apps.py, when Django starts), the secret
# key when it is first used (below).
DATA_DIR = Path(env_str("SERVICE_DATA_DIR") or BASE_DIR / "data")

# --- The service -------------------------------------------------------------
# Auth is enabled only when the key is set (spec: insecure mode otherwise).
SERVICE_API_KEY = env_secret("SERVICE_API_KEY")
SERVICE_HOST = env_str("SERVICE_HOST") or "127.0.0.1"
SERVICE_PORT = env_int("SERVICE_PORT", 8000, minimum=1, maximum=65535)
SERVICE_CONFIG = Path(env_str("SERVICE_CONFIG") or "Secretfile.yml").absolute()
SERVICE_LOCKFILE = Path(lockfile).absolute() if (lockfile := env_str("SERVICE_LOCKFILE")) else None
SERVICE_ALLOW_SCRIPTS = env_bool("SERVICE_ALLOW_SCRIPTS")
# Webhooks may point to loopback, link-local and private addresses (off: such URLs are refused).
SERVICE_WEBHOOK_ALLOW_PRIVATE = env_bool("SERVICE_WEBHOOK_ALLOW_PRIVATE")
# GET /metrics answers without an API key (off: it needs a key with the metrics scope).
SERVICE_METRICS_PUBLIC = env_bool("SERVICE_METRICS_PUBLIC")
# A target file as a var file hands its values to render (issue 18): refused unless enabled.
SERVICE_VAR_FILES_FROM_OUTPUTS = env_bool("SERVICE_VAR_FILES_FROM_OUTPUTS")
# Folders local targets may write in; empty: the definition's folder.
SERVICE_TARGET_ROOTS = env_paths("SERVICE_TARGET_ROOTS")
# --- What a definition may read of this server (docs/configuration.md, "Definition trust") ----
# Environment variables a definition reads through ${NAME}, `source: env` and the upper-case
# override: names or * ? patterns, comma-separated. Unset or empty: none in the service (web, job
# worker, scheduler) and every one on the command line (secretsctl, manage.py); "-": none anywhere.
# SERVICE_*, DJANGO_* and DATABASE_URL* are never readable, whatever a pattern matches.
SERVICE_DEFINITION_ENV = env_patterns("SERVICE_DEFINITION_ENV")
# A request's var_files must be var files the definition declares (environments.profiles.*.var_files);
# true lets requests name any YAML file of the definition's folder (the command line always may).
SERVICE_UNDECLARED_VAR_FILES = env_bool("SERVICE_UNDECLARED_VAR_FILES")
# Reading values over HTTP must be a deliberate choice: only the exact word "true" enables it
# (not "1" or "yes", which stop the service at start), and never in insecure mode (see
# actions.reveal_secret).
SERVICE_ALLOW_VALUE_READ = env_true_only("SERVICE_ALLOW_VALUE_READ")
SERVICE_LOG_LEVEL = env_choice("SERVICE_LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()
# text: TIME LEVEL LOGGER MESSAGE; json: one JSON object per line (app and access lines alike).
SERVICE_LOG_FORMAT = env_choice("SERVICE_LOG_FORMAT", "text", ("text", "json"))
SERVICE_MAX_BODY_BYTES = env_int("SERVICE_MAX_BODY_BYTES", 1_048_576, minimum=1)
# Definition files past this are refused without being read (16 MiB: ~45,000 secrets in block style).
SERVICE_MAX_DEFINITION_BYTES = env_int("SERVICE_MAX_DEFINITION_BYTES", 16 * 1_048_576, minimum=1)
# Interpolation ({{ var.a }}{{ var.a }} doubling per variable) is refused before it builds a string
# past the first, or more in all than the second: a 1 KB definition cannot fill a worker's memory.
SERVICE_MAX_INTERPOLATED_BYTES = env_int("SERVICE_MAX_INTERPOLATED_BYTES", 1_048_576, minimum=1)
SERVICE_MAX_RENDERED_BYTES = env_int("SERVICE_MAX_RENDERED_BYTES", 64 * 1_048_576, minimum=1)
# CPU seconds one interpolation, or one local/template render, may run before it is stopped (a loop
# in a template otherwise holds the engine and every lock for as long as it runs).
SERVICE_RENDER_TIMEOUT = env_int("SERVICE_RENDER_TIMEOUT", 10, minimum=1)
SERVICE_VERSION = __version__
# gunicorn (project/gunicorn.conf.py; `serve --host/--port/--workers` win over these).
SERVICE_WORKERS = env_int("SERVICE_WORKERS", 2, minimum=1)
# Threads let a worker answer /health while another request runs a long sync.
SERVICE_THREADS = env_int("SERVICE_THREADS", 4, minimum=1)
SERVICE_TIMEOUT = env_int("SERVICE_TIMEOUT", 300, minimum=1)
# Admin logins (django-axes): this many failures from one client address lock that address out
# (for every username) until this many seconds pass without another failure.
SERVICE_ADMIN_LOGIN_FAILURE_LIMIT = env_int("SERVICE_ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
SERVICE_ADMIN_LOGIN_COOLOFF_SECONDS = env_int("SERVICE_ADMIN_LOGIN_COOLOFF_SECONDS", 900, minimum=1)
# --- Production: TLS at the proxy, the admin's networks (deploy/, docs/operations.md "Production")
# Clients reach the service over HTTPS, through the proxy of deploy/nginx/: one switch for
# Secure cookies, HSTS, the redirect of plain HTTP and the proxy's scheme header (so it needs
# SERVICE_BEHIND_PROXY, which it turns on). HSTS covers subdomains; preload is the operator's
# choice (it commits the whole domain to HTTPS in browsers for months): off unless asked.
SERVICE_HTTPS = env_bool("SERVICE_HTTPS")
SERVICE_HSTS_SECONDS = env_int("SERVICE_HSTS_SECONDS", 31_536_000, minimum=0)
SERVICE_HSTS_PRELOAD = env_bool("SERVICE_HSTS_PRELOAD")
# Behind the reverse proxy of deploy/nginx/ (which overwrites X-Forwarded-For, -Proto and -Host
# on every request): the scheme, host and client address come from those headers. `serve`
# then listens on loopback (or SERVICE_SOCKET) only, where nothing but the proxy reaches it.
SERVICE_BEHIND_PROXY = env_bool("SERVICE_BEHIND_PROXY", default=SERVICE_HTTPS)
if SERVICE_HTTPS and not SERVICE_BEHIND_PROXY:
    raise ImproperlyConfigured(
        "SERVICE_HTTPS=true needs SERVICE_BEHIND_PROXY (true, or unset): the proxy terminates TLS and tells the "
        "service the scheme, a header only the proxy may set."
    )
# A Unix socket `serve` listens on instead of SERVICE_HOST:SERVICE_PORT (the proxy's upstream in
# deploy/: only processes that can open the socket's folder reach it).
SERVICE_SOCKET = Path(socket).absolute() if (socket := env_str("SERVICE_SOCKET")) else None
# The admin (/admin/) answers only clients in these networks (empty: any); others get 403.
SERVICE_ADMIN_NETWORKS = env_networks("SERVICE_ADMIN_NETWORKS")
# A write waits this long for another write's locks, then fails with lock_timeout (503).
SERVICE_LOCK_TIMEOUT = env_int("SERVICE_LOCK_TIMEOUT", 60, minimum=1)

# --- Where the server's own credentials may go (secretsapi/service/definition/egress.py) -------
# A credential a definition does not give itself (GITHUB_TOKEN, VAULT_TOKEN, ~/.vault-token, AWS's
# and Azure's default chains...) goes only to its kind's public service, to an address the
# server's own environment names (VAULT_ADDR...), or to one listed here:
# "<provider kind>=<https://host[:port]>", comma or space separated; http:// allows plain HTTP.
# SERVICE_PROVIDER_READ: "<target type>=<location prefix>" entries, where a value read with those
# credentials may come from (a provider_read source, an import, a repair's copy, a template's
# render, the value endpoint); unset or empty: nowhere in the service, anywhere on the command
# line; "-": nowhere. Addresses empty by default: self-hosted stores need a listing.
SERVICE_CREDENTIAL_ADDRESSES = env_pairs("SERVICE_CREDENTIAL_ADDRESSES", is_address)


SERVICE_PROVIDER_READ = env_locations("SERVICE_PROVIDER_READ")
# SERVICE_PROVIDER_WRITE: "<target type>=<location prefix>" entries, where a definition may write
# with those credentials (another team's path in the operator's store); unset or empty: anywhere
# the addresses allow (SecretZero's behaviour), "-": nowhere. Its own credentials are not limited.
SERVICE_PROVIDER_WRITE = env_locations("SERVICE_PROVIDER_WRITE")


# Which of the operator's identities a definition may select by name: profiles of the server's AWS
# shared files (a provider's profile), contexts of its kubeconfig (a provider's context, without a
# kubeconfig of the definition's own), roles assumed with its AWS credentials (below). Unset or
# empty: none in the service, any on the command line; "-": none anywhere. Without a selection the
# server's default identity is used, as before.
SERVICE_AWS_PROFILES = env_names("SERVICE_AWS_PROFILES")
SERVICE_KUBE_CONTEXTS = env_names("SERVICE_KUBE_CONTEXTS")
# Role ARNs a definition may assume (auth kind assume_role) with the server's AWS credentials. A
# role assumed with keys the definition gives is its own.
SERVICE_AWS_ROLES = env_names("SERVICE_AWS_ROLES")
# Client ids of the server's user-assigned Azure managed identities a definition may select (auth
# kind managed_identity with a client_id); the host's identities are the operator's credentials.
SERVICE_AZURE_IDENTITIES = env_names("SERVICE_AZURE_IDENTITIES")


# Admin connections of the source-credential generators (postgres_user, mysql_user, aws_iam_key):
# a definition names one, never an address or a credential (docs/credentials.md).
SERVICE_ROTATION_CONNECTIONS = env_connections("SERVICE_ROTATION_CONNECTIONS")

# --- Jobs: the long operations run in `manage.py worker` (django-tasks' database backend) -----
# A POST waits this long for its job, then answers 202 with the job (below a proxy's timeout).
SERVICE_JOB_WAIT_SECONDS = env_int("SERVICE_JOB_WAIT_SECONDS", 30, minimum=0)
# Jobs one worker command runs at once: some runners take writes (sync, rotation), the others
# reads (checks, render, validate), so reads never hold a write behind them.
SERVICE_JOB_WORKERS = env_int("SERVICE_JOB_WORKERS", 3, minimum=2, maximum=32)
# Of those, the runners that take writes (at least 1, fewer than SERVICE_JOB_WORKERS): two by
# default, so one project's long sync does not hold up another project's (writes of one project
# still take turns on its lockfile lock).
SERVICE_JOB_WRITE_WORKERS = env_int("SERVICE_JOB_WRITE_WORKERS", min(2, SERVICE_JOB_WORKERS - 1),
                                    minimum=1, maximum=31)
if SERVICE_JOB_WRITE_WORKERS >= SERVICE_JOB_WORKERS:
    raise ImproperlyConfigured(
        f"SERVICE_JOB_WRITE_WORKERS must be below SERVICE_JOB_WORKERS ({SERVICE_JOB_WORKERS}), not "
        f"{SERVICE_JOB_WRITE_WORKERS}: at least one runner takes reads.")
# The job queues' name: instances sharing a database share its queues (any worker runs any job)
# unless each is given its own (hosts that do not share the definition's folder).
SERVICE_JOB_QUEUE = env_str("SERVICE_JOB_QUEUE", "secretsapi") or "secretsapi"
if not re.fullmatch(r"[A-Za-z0-9_-]{1,25}", SERVICE_JOB_QUEUE):
    raise ImproperlyConfigured("SERVICE_JOB_QUEUE must be 1 to 25 letters, digits, '_' or '-'")
# A worker writes its heartbeat this often; it is alive for /health and new jobs while its last
# one is under three beats old, dead (its job taken back) past six.
SERVICE_WORKER_HEARTBEAT_SECONDS = env_int("SERVICE_WORKER_HEARTBEAT_SECONDS", 10, minimum=1, maximum=20)
# A job worker's niceness (raised to it at start, never lowered): the web workers' requests get
# the CPU first while a long sync runs beside them on the same host.
SERVICE_WORKER_NICE = env_int("SERVICE_WORKER_NICE", 10, minimum=0, maximum=19)
# Ended jobs (and their results) are deleted this many days after they ended.
SERVICE_JOB_RETENTION_DAYS = env_int("SERVICE_JOB_RETENTION_DAYS", 7, minimum=1)
# Jobs queued or running at once, per key and in all: past either, 429 with Retry-After.
SERVICE_JOBS_PER_KEY = env_int("SERVICE_JOBS_PER_KEY", 8, minimum=1)
SERVICE_JOBS_MAX = env_int("SERVICE_JOBS_MAX", 200, minimum=1)
# Jobs queued or running at once in one project, whichever keys asked, so one busy project cannot
# fill SERVICE_JOBS_MAX and starve the others: 50, six keys' worth at 8 plus its scheduled ticks'
# jobs, a quarter of the server's bound. The scheduler's ticks count, and are never refused.
SERVICE_JOBS_PER_PROJECT = env_int("SERVICE_JOBS_PER_PROJECT", 50, minimum=1)
# `serve` starts a job worker beside the API: auto (when none is running), yes, no, or wait (for
# one started beside it, up to 30 s).
SERVICE_SERVE_WORKER = env_str("SERVICE_SERVE_WORKER", "auto") or "auto"
if SERVICE_SERVE_WORKER not in ("auto", "yes", "no", "wait"):
    raise ImproperlyConfigured("SERVICE_SERVE_WORKER must be auto, yes, no or wait")
# A read of a definition (or a definition sent to validate) this small is answered in the request,
# not queued as a job: a few milliseconds of work pays no queue round trip.
SERVICE_INLINE_MAX_BYTES = env_int("SERVICE_INLINE_MAX_BYTES", 65536, minimum=0)
SERVICE_ROTATION_SCHEDULE = env_cron("SERVICE_ROTATION_SCHEDULE", "0 * * * *")
SERVICE_DRIFT_SCHEDULE = env_cron("SERVICE_DRIFT_SCHEDULE", "0 0 * * *")

# Live forwarding of every new audit row (audit/forwarding.py): syslog+udp://host:port,
# syslog+tcp://host:port (RFC 5424) or file:///absolute/path (JSON lines, 0600); empty: off.
SERVICE_AUDIT_FORWARD = env_str("SERVICE_AUDIT_FORWARD")


AUDIT_FORWARD = audit_sink(SERVICE_AUDIT_FORWARD)

# --- Django ------------------------------------------------------------------
DEBUG = env_bool("SERVICE_DEBUG")
# Given (SERVICE_SECRET_KEY or SERVICE_SECRET_KEY_FILE), else generated into the data folder
# (0600) when first used, not when this module is imported. Instances sharing a database must
# share it: `serve` and `worker` refuse to start with another key than the database's first one
# (deployment/key_fingerprint.py).
SECRET_KEY = env_secret("SERVICE_SECRET_KEY") or SimpleLazyObject(lambda: load_or_create(DATA_DIR / "secret_key"))
ALLOWED_HOSTS = env_list("SERVICE_ALLOWED_HOSTS") or ["*"]

INSTALLED_APPS = [
    # First: its ready() makes the data folder private and the SQLite file 0600 before any app
    # may connect; it also keeps the secret key's fingerprint and makes backups.
    "deployment",
    # Before django.contrib.auth: its createsuperuser (refusing reserved names) replaces Django's.
    "adminusers",
    # The admin without its autodiscovery at start-up: project/urls.py imports the apps' admin
    # modules when the URLs load, so a command or job worker that serves no page does not
    # (a quarter of a second of every process start).
    "django.contrib.admin.apps.SimpleAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "audit",
    "axes",
    "apikeys",
    "projects",
    "secretsapi",
    "django_tasks",
    "django_tasks_db",
    "jobs",
    "webhooks",
    "metrics",
]

MIDDLEWARE = [
    # Every audit row of a request names its client (behind the proxy, the forwarded address).
    "secretsapi.api.origin.AuditOriginMiddleware",
    # Insecure mode answers only this machine: before anything else reads the request.
    "secretsapi.api.loopback.LoopbackOnlyMiddleware",
    # The admin only from SERVICE_ADMIN_NETWORKS (nothing to do when it is empty).
    "secretsapi.api.admin_networks.AdminNetworksMiddleware",
    "secretsapi.api.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every answer (CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "secretsapi.api.cors.ServiceCorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: it turns a locked-out login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

# django-axes throttles admin logins: its backend, first, refuses a locked-out username or client
# before any password is checked. Attempts are rows in the database, so every worker and
# instance sees the same counts.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = SERVICE_ADMIN_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(seconds=SERVICE_ADMIN_LOGIN_COOLOFF_SECONDS)
# A client address locks itself out, whatever usernames it tries (so each username+address pair
# too), never a username for everyone: five wrong passwords for "admin" from anywhere would
# otherwise lock the real admin out from every address, renewable by anyone.
AXES_LOCKOUT_PARAMETERS = ["ip_address"]
# Attempts refused during a lockout are not written by axes (it would append each one's form
# data to a row): the audit log counts them (``admin_lockout``), and the cool-off runs from the
# last failure that was checked.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Logins are already audit rows (``admin_login``); axes' own access log would be a second one.
AXES_DISABLE_ACCESS_LOG = True
# Log lines name only what locks (username, address), never the user agent; no banner at start.
AXES_VERBOSE = False
if SERVICE_BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    USE_X_FORWARDED_HOST = True
    # The proxy's peer, not the proxy, is the address a lockout counts.
    AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR")
# SERVICE_HTTPS: what `manage.py check --deploy` asks of a site served over HTTPS.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SECURE_SSL_REDIRECT = SERVICE_HTTPS
SECURE_HSTS_SECONDS = SERVICE_HSTS_SECONDS if SERVICE_HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SERVICE_HTTPS
SECURE_HSTS_PRELOAD = SERVICE_HTTPS and SERVICE_HSTS_PRELOAD
# A probe on the host (curl --unix-socket) reads /health without TLS.
SECURE_REDIRECT_EXEMPT = [r"^health$"]
# Preload off is a deliberate default (above), not an oversight for `check --deploy` to report.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

# --- Pages: the Content-Security-Policy and the templates (project/page_settings.py)
CONTENT_SECURITY_POLICY = page_settings.CONTENT_SECURITY_POLICY
TEMPLATES = page_settings.TEMPLATES

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = "project.wsgi.application"
# Paths are exactly the spec's: /sync, never /sync/.
APPEND_SLASH = False

# PostgreSQL (postgres://user:password@host:5432/name, psycopg 3) lets several instances share
# one audit log and serializes their lockfile writes with advisory locks (secretsapi.database_locks).
# Persistent connections are checked before reuse, so a restarted database costs one error-free
# reconnect rather than a failed request.
# DATABASE_URL holds the database's password: DATABASE_URL_FILE may name a file holding it.
DATABASES = {
    "default": dj_database_url.parse(
        env_secret("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'service.sqlite3'}",
        conn_max_age=60, conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The file is created 0600 at start (deployment/apps.py) before SQLite opens it. Several
    # gunicorn workers write audit rows: WAL, a busy timeout, and transactions that take the write
    # lock when they begin (IMMEDIATE), so none fails upgrading a read to a write, avoid
    # "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE",
         "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
    )
if DATABASES["default"]["ENGINE"].startswith("django.db.backends.postgresql"):
    # An unreachable server (stopped, firewalled) fails a request, and /health, in seconds rather
    # than at the operating system's TCP timeout; ``?connect_timeout=`` in DATABASE_URL overrides it.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The parsed definitions every process on this host shares (a command line run skips parsing what
# an earlier run parsed), in files of the data folder (0600 in a 0700 folder, each written to a
# temp file and renamed), each authenticated with an HMAC keyed on SECRET_KEY before it is read,
# never a value (secretsapi/definition_store.py).
DEFINITION_STORE = {"LOCATION": str(DATA_DIR / "cache" / "definitions"), "TIMEOUT": 7 * 24 * 3600, "MAX_ENTRIES": 64}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
# Serve admin and docs assets straight from the installed apps: no collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

DATA_UPLOAD_MAX_MEMORY_SIZE = SERVICE_MAX_BODY_BYTES

# --- CORS: everything by default (spec), restricted by SERVICE_CORS_ORIGINS ----
# In insecure mode only loopback origins; a preflight gets every header it asks for (api/cors.py).
CORS_ALLOWED_ORIGINS = env_list("SERVICE_CORS_ORIGINS")
CORS_ALLOW_ALL_ORIGINS = not CORS_ALLOWED_ORIGINS
CORS_ALLOW_CREDENTIALS = True
# The API only: a page of another origin must not read the admin with its user's session cookie
# (nor the CSRF token in its forms).
CORS_URLS_REGEX = r"^/(?!admin/)"
# Answered when a preflight names no header; otherwise its list is echoed (see above).
CORS_ALLOW_HEADERS = [*default_headers, "x-api-key"]
CORS_ALLOW_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"]
CORS_EXPOSE_HEADERS = ["WWW-Authenticate"]

# --- REST framework and OpenAPI: the API's own settings, none from the environment (project/api_settings.py)
REST_FRAMEWORK = api_settings.REST_FRAMEWORK
SPECTACULAR_SETTINGS = api_settings.SPECTACULAR_SETTINGS

# --- The task engine: Django's tasks API (django-tasks, the backport of Django 6.0's django.tasks)
# with its database backend: a job is a row of one table of the service's database, on SQLite as
# on PostgreSQL, so a queued job survives any process's restart and several instances share the
# queues (claimed with SELECT ... FOR UPDATE SKIP LOCKED on PostgreSQL, an exclusive transaction
# on SQLite). Two queues: writes and reads (secretsapi/operations.py).
JOB_QUEUES = {"writes": f"{SERVICE_JOB_QUEUE}-writes", "reads": f"{SERVICE_JOB_QUEUE}-reads"}
TASKS = {
    "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": list(JOB_QUEUES.values())},
}

# --- Logging: secret values never reach it (they never reach exceptions either) ----
LOGGING = log_format.django_logging(SERVICE_LOG_FORMAT, SERVICE_LOG_LEVEL)
