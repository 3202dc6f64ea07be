from django.db import migrations


def forward(apps, schema_editor):
    """Stored summaries said a secret's length ("set, 14 characters"): now only that it is set.
    A private key's summary (its algorithm and fingerprint) stays."""
    Cluster = apps.get_model("probes", "Cluster")
    for cluster in Cluster.objects.exclude(secret_summary={}).only("pk", "secret_summary"):
        summary = {
            name: value if name == "ssh_private_key" else "set"
            for name, value in cluster.secret_summary.items()
        }
        if summary != cluster.secret_summary:
            Cluster.objects.filter(pk=cluster.pk).update(secret_summary=summary)


class Migration(migrations.Migration):
    dependencies = [("probes", "0002_tables_renamed")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
