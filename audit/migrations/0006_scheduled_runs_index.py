"""An index for GET /metrics' scheduled-run gauges: each project's newest row of the scheduler's
of each kind is one seek (without it, a project that never ran one scanned every row of the kind)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0005_service_project'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='auditentry',
            index=models.Index(fields=['user', 'action', 'project', '-timestamp', '-id'],
                               name='audit_user_act_proj_newest'),
        ),
    ]
