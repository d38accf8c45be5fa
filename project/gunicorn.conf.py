"""gunicorn settings for ``manage.py serve``: gunicorn's own threaded worker (gthread) and
documented settings only, values from the Django settings, which read the environment
(``serve``'s --host, --port, --workers and --log-level reach gunicorn as its own command-line
options, which win over this file).

Slow clients, body limits and connection floods are the reverse proxy's job (deploy/nginx/):
gunicorn's deployment guide asks for a buffering proxy in front of it, which hands each request
over whole, so a thread never waits on a client."""

import os

from django.conf import settings

from secretsapi import log_format

# The first setting read imports the settings module (the app loads before the workers fork: preload_app).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

bind = f"{settings.SERVICE_HOST}:{settings.SERVICE_PORT}"
workers = settings.SERVICE_WORKERS
threads = settings.SERVICE_THREADS
worker_class = "gthread"
loglevel = settings.SERVICE_LOG_LEVEL.lower()
accesslog = "-"
errorlog = "-"
# Query strings are not logged: a key wrongly sent in the URL must not reach the log. The key's
# name (never the key) and the time, level and format come from secretsapi/log_format.py.
access_log_format = log_format.ACCESS_FORMAT
logconfig_dict = log_format.gunicorn_logging(settings.SERVICE_LOG_FORMAT, settings.SERVICE_LOG_LEVEL)
timeout = settings.SERVICE_TIMEOUT
graceful_timeout = 30
wsgi_app = "project.wsgi:application"
# The app loads in the master before the workers fork: under `manage.py serve` (whose process is
# the master) each worker then starts from what serve imported already.
preload_app = True
# Several instances may run on one machine: a shared default control socket would collide.
control_socket_disable = True


