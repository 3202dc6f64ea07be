from django.db import migrations, models

LAYOUTS = [("decision", "Decision document"), ("full", "Every result printed")]


class Migration(migrations.Migration):
    """Revisions rendered before the decision document printed every result: they keep that
    layout (a seal renders their sign-off page the same way); new ones default to it."""

    dependencies = [
        ("reports", "0011_sheet_token_moved"),
    ]

    operations = [
        migrations.AddField(
            model_name="sheet",
            name="layout",
            field=models.CharField(choices=LAYOUTS, default="full", max_length=10),
        ),
        migrations.AlterField(
            model_name="sheet",
            name="layout",
            field=models.CharField(choices=LAYOUTS, default="decision", max_length=10),
        ),
    ]
