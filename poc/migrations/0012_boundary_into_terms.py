"""A candidate's boundaries are procurement's terms now (procurement.0002 carried the four texts
over): the old table goes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("poc", "0011_idempotency_moved"),
        ("procurement", "0002_former_boundaries"),
    ]

    operations = [migrations.DeleteModel(name="Boundary")]
