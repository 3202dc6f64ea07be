"""GPU evidence is its own app now (probes.0001 took over the tables): poc's models are gone from
its state, with nothing done to the database."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("poc", "0009_api_token_moved"),
        ("probes", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="ProbeOutput"),
                migrations.DeleteModel(name="ProbeNode"),
                migrations.DeleteModel(name="ProbeBinding"),
                migrations.DeleteModel(name="ProbeRun"),
                migrations.DeleteModel(name="Cluster"),
            ],
            database_operations=[],
        ),
    ]
