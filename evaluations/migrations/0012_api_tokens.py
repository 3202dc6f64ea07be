"""Project API tokens move here from poc (the app the projects live in, so that every app's API
can build on them). The rows stay: the table is taken over and renamed, the content type and
its permissions follow."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_follows(apps, schema_editor):
    content_types = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    if (
        not content_types.objects.using(db)
        .filter(app_label="evaluations", model="apitoken")
        .exists()
    ):
        content_types.objects.using(db).filter(app_label="poc", model="apitoken").update(
            app_label="evaluations"
        )


def content_type_returns(apps, schema_editor):
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(
        schema_editor.connection.alias
    )
    moved = content_types.filter(app_label="evaluations", model="apitoken")
    if content_types.filter(app_label="poc", model="apitoken").exists():
        moved.delete()  # a migrate in between made poc's again: keep that one
    else:
        moved.update(app_label="poc")


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("evaluations", "0011_solution_team_entries"),
        # Every table that points at the old one exists before it is renamed.
        ("poc", "0008_cell_integration_effort"),
        ("reports", "0010_sheet_unsent"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiToken",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(max_length=100, verbose_name="name")),
                        ("prefix", models.CharField(max_length=16, unique=True)),
                        ("token_hash", models.CharField(max_length=64)),
                        ("scopes", models.JSONField(default=list)),
                        (
                            "expires_at",
                            models.DateTimeField(blank=True, null=True, verbose_name="expires at"),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="api_tokens",
                                to="evaluations.project",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "API token",
                        "ordering": ["-created_at"],
                        "db_table": "poc_apitoken",
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.AlterModelTable(name="apitoken", table=None),
        migrations.RunPython(content_type_follows, content_type_returns),
    ]
