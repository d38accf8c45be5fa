"""Django app for the audit log."""

from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from axes.signals import user_locked_out
        from django.contrib.auth.signals import user_logged_in, user_login_failed

        from audit import logins

        # The one use of signals: Django reports logins only through them (see audit/logins.py).
        user_logged_in.connect(logins.logged_in, dispatch_uid="audit.admin_login.ok")
        user_login_failed.connect(logins.login_failed, dispatch_uid="audit.admin_login.failed")
        # django-axes, which throttles admin logins, reports a lockout the same way.
        user_locked_out.connect(logins.locked_out, dispatch_uid="audit.admin_lockout")
