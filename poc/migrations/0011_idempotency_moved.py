"""Idempotency records live in evaluations now (evaluations.0014 took over the table): poc's
model is gone from its state, with nothing done to the database."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0014_idempotency_records"),
        ("poc", "0010_gpu_evidence_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="IdempotencyRecord")],
            database_operations=[],
        ),
    ]
