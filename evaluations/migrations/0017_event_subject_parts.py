from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0016_event_key_id"),
    ]

    operations = [
        migrations.AddField(
            model_name="projectevent",
            name="subject_parts",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
