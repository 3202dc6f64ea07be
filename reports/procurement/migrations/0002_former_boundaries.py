"""The four free-text boundary fields of earlier versions become terms, keeping every character:
the licence text becomes the SPDX expression when it is one (in SPDX's spelling; the text as
written stays in the licence notes when that differs, and when it is no expression), support,
upgrade and exit texts become their notes. All are "to be confirmed":
nobody stated a basis for them. Back again, the notes (or the expression) return to the fields
and leave the terms.
poc.0012 drops the old table after this has run."""

from django.db import migrations

REASON = "Carried over from the former boundary field {field}."
FIELDS = {
    "license_model": "licence_notes",
    "support_terms": "support_notes",
    "upgrade_cadence": "upgrade_notes",
    "exit_plan": "exit_notes",
}


def _spdx(text):
    from reports.procurement.licences import is_spdx, spdx_normalize

    return spdx_normalize(text) if is_spdx(text) else None


def boundaries_to_terms(apps, schema_editor):
    db = schema_editor.connection.alias
    Boundary = apps.get_model("poc", "Boundary")
    TermEntry = apps.get_model("procurement", "TermEntry")
    entries = []
    for boundary in Boundary.objects.using(db).select_related("candidate").order_by("pk"):
        for field, key in FIELDS.items():
            text = (getattr(boundary, field) or "").strip()
            if not text:
                continue
            expression = _spdx(text) if field == "license_model" else None
            values = {key: text} if expression != text else {}
            if expression is not None:
                values["licence_spdx"] = expression
            entries += [
                TermEntry(
                    project_id=boundary.candidate.project_id,
                    candidate_id=boundary.candidate_id,
                    key=term,
                    value=value,
                    basis="tbc",
                    reason=REASON.format(field=field),
                    current=True,
                    recorded_at=boundary.updated_at,
                )
                for term, value in values.items()
            ]
    TermEntry.objects.using(db).bulk_create(entries, batch_size=1000)


def terms_to_boundaries(apps, schema_editor):
    db = schema_editor.connection.alias
    Boundary = apps.get_model("poc", "Boundary")
    TermEntry = apps.get_model("procurement", "TermEntry")
    keys = [*FIELDS.values(), "licence_spdx"]
    texts = {}
    for entry in TermEntry.objects.using(db).filter(current=True, key__in=keys).order_by("pk"):
        fields = texts.setdefault(entry.candidate_id, {})
        if entry.key == "licence_spdx":
            fields.setdefault("license_model", str(entry.value or ""))
        else:
            field = next(f for f, k in FIELDS.items() if k == entry.key)
            fields[field] = str(entry.value or "")
    Boundary.objects.using(db).bulk_create(
        [Boundary(candidate_id=candidate, **fields) for candidate, fields in texts.items()]
    )
    # What went back into the fields leaves the terms (forward again, it is carried over anew).
    TermEntry.objects.using(db).filter(key__in=keys).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("procurement", "0001_initial"),
        ("poc", "0011_idempotency_moved"),
    ]

    operations = [migrations.RunPython(boundaries_to_terms, terms_to_boundaries)]
