"""gunicorn settings for ``manage.py serve``; values come from the environment it prepares."""

import os

bind = f"{os.environ.get('SERVICE_HOST', '127.0.0.1')}:{os.environ.get('SERVICE_PORT', '8000')}"
workers = int(os.environ.get("SERVICE_WORKERS", "2"))
# Threads let a worker answer /health while another request runs a long sync.
threads = int(os.environ.get("SERVICE_THREADS", "4"))
worker_class = "gthread"
loglevel = os.environ.get("SERVICE_LOG_LEVEL", "info").lower()
accesslog = "-"
errorlog = "-"
# Query strings are not logged: a key wrongly sent in the URL must not reach the log.
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(L)ss'
timeout = int(os.environ.get("SERVICE_TIMEOUT", "300"))
graceful_timeout = 30
wsgi_app = "project.wsgi:application"
# Several instances may run on one machine: a shared default control socket would collide.
control_socket_disable = True
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
