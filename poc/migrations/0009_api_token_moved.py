"""API tokens now live in evaluations (evaluations.0012 took over the table): the foreign keys
follow in the state only, and poc's model is gone from it."""

import django.db.models.deletion
from django.db import migrations, models


def token_field():
    return models.ForeignKey(
        blank=True,
        null=True,
        on_delete=django.db.models.deletion.SET_NULL,
        to="evaluations.apitoken",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0012_api_tokens"),
        ("poc", "0008_cell_integration_effort"),
        ("reports", "0011_sheet_token_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(model_name="runimport", name="token", field=token_field()),
                migrations.AlterField(model_name="proberun", name="token", field=token_field()),
                migrations.DeleteModel(name="ApiToken"),
            ],
            database_operations=[],
        ),
    ]
