"""The responses kept for Idempotency-Key replays move here from poc, beside the API tokens whose
callers they scope (API plumbing is this app's). The rows stay: the table is taken over and
renamed, the content type and its permissions follow."""

from django.db import migrations, models


def content_type_follows(apps, schema_editor):
    _move(apps, schema_editor, "poc", "evaluations")


def content_type_returns(apps, schema_editor):
    _move(apps, schema_editor, "evaluations", "poc")


def _move(apps, schema_editor, source, target):
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(
        schema_editor.connection.alias
    )
    moving = content_types.filter(app_label=source, model="idempotencyrecord")
    if content_types.filter(app_label=target, model="idempotencyrecord").exists():
        moving.delete()  # a migrate in between made the target's: keep that one
    else:
        moving.update(app_label=target)


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("evaluations", "0013_project_phase_moves"),
        ("poc", "0010_gpu_evidence_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='IdempotencyRecord',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('scope', models.CharField(max_length=100)),
                        ('key', models.CharField(max_length=200)),
                        ('request_hash', models.CharField(max_length=64)),
                        ('status_code', models.PositiveSmallIntegerField(default=0)),
                        ('response', models.JSONField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'db_table': 'poc_idempotencyrecord',
                        'db_table': 'poc_idempotencyrecord',
                    'indexes': [models.Index(fields=['created_at'], name='idempotency_created')],
                        'constraints': [models.UniqueConstraint(fields=('scope', 'key'), name='idempotency_unique_key')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.AlterModelTable(name="idempotencyrecord", table=None),
        migrations.RunPython(content_type_follows, content_type_returns),
    ]
