from django.db import migrations, models

# Project field -> template library field (the library's columns end in _en / _zh).
REQUIREMENT_TEXTS = {"feature": "feature"}
ACTION_TEXTS = {
    "question": "question",
    "steps": "steps",
    "expected_evidence": "evidence",
    "pass_criterion": "pass_criterion",
}


def _translations(row, template, texts):
    found = {}
    for field, library_field in texts.items():
        pair = {
            "en": getattr(template, f"{library_field}_en"),
            "zh": getattr(template, f"{library_field}_zh"),
        }
        if getattr(row, field) in pair.values():  # still the library's words, not edited
            found[field] = pair
    return found


def fill(apps, schema_editor):
    """Rows applied from the library before this change get both languages back, for each
    text the team has not edited since."""
    pairs = (
        ("Requirement", "TemplateRequirement", REQUIREMENT_TEXTS),
        ("AcceptanceAction", "TemplateAction", ACTION_TEXTS),
    )
    for model_name, template_name, texts in pairs:
        model = apps.get_model("evaluations", model_name)
        templates = {t.key: t for t in apps.get_model("evaluations", template_name).objects.all()}
        changed = []
        for row in model.objects.exclude(template_key="").iterator():
            template = templates.get(row.template_key)
            if template is not None:
                row.translations = _translations(row, template, texts)
                changed.append(row)
        model.objects.bulk_update(changed, ["translations"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("evaluations", "0008_project_event_chain"),
    ]

    operations = [
        migrations.AddField(
            model_name="acceptanceaction",
            name="translations",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="requirement",
            name="translations",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
