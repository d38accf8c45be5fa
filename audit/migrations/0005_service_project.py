"""``project`` becomes the service's project (issue 40): the definition's own ``metadata.project``,
which it held, moves to ``definition_project``; every row that ran on a definition before
projects existed ran in the default one."""

from django.db import migrations, models
from django.db.models import F


def _move(apps, schema_editor):  # type: ignore[no-untyped-def]
    entries = apps.get_model("audit", "AuditEntry")
    entries.objects.exclude(project="").update(definition_project=F("project"), project="")
    entries.objects.exclude(definition="").update(project="default")


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0004_context_and_outcome'),
    ]

    operations = [
        migrations.AddField(
            model_name='auditentry',
            name='definition_project',
            field=models.CharField(blank=True, db_default='', default='', max_length=255),
        ),
        migrations.RunPython(_move, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name='auditentry',
            index=models.Index(fields=['project', '-timestamp', '-id'], name='audit_project_newest'),
        ),
    ]
