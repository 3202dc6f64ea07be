"""The sheet's generating token now points at evaluations' ApiToken (the same rows: only the
model's home moved, so nothing changes in the database)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0012_api_tokens"),
        ("reports", "0010_sheet_unsent"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="sheet",
                    name="generated_by_token",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="evaluations.apitoken",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
