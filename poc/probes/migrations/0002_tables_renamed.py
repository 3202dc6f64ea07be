"""GPU evidence's tables take this app's names (a rename: no row is copied), with their indexes;
the content types and their permissions follow, both ways."""

from django.db import migrations

MODELS = ("cluster", "proberun", "probenode", "probeoutput", "probebinding")


def _move_content_types(apps, schema_editor, source, target):
    content_types = apps.get_model("contenttypes", "ContentType").objects.using(
        schema_editor.connection.alias
    )
    for model in MODELS:
        moving = content_types.filter(app_label=source, model=model)
        if content_types.filter(app_label=target, model=model).exists():
            moving.delete()  # a migrate in between made the target's: keep that one
        else:
            moving.update(app_label=target)


def content_types_follow(apps, schema_editor):
    _move_content_types(apps, schema_editor, "poc", "probes")


def content_types_return(apps, schema_editor):
    _move_content_types(apps, schema_editor, "probes", "poc")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('probes', '0001_initial'),
        ('poc', '0010_gpu_evidence_moved'),
    ]

    operations = [
        migrations.RenameIndex(
            model_name='proberun',
            new_name='probes_prob_candida_60145c_idx',
            old_name='poc_proberu_candida_243b04_idx',
        ),
        migrations.RenameIndex(
            model_name='proberun',
            new_name='probes_prob_cluster_421ac2_idx',
            old_name='poc_proberu_cluster_839935_idx',
        ),
        migrations.RenameIndex(
            model_name='proberun',
            new_name='probes_prob_status_3cdd32_idx',
            old_name='poc_proberu_status_05f5c7_idx',
        ),
        migrations.AlterModelTable(
            name='cluster',
            table=None,
        ),
        migrations.AlterModelTable(
            name='probebinding',
            table=None,
        ),
        migrations.AlterModelTable(
            name='probenode',
            table=None,
        ),
        migrations.AlterModelTable(
            name='probeoutput',
            table=None,
        ),
        migrations.AlterModelTable(
            name='proberun',
            table=None,
        ),
        migrations.RunPython(content_types_follow, content_types_return),
    ]
