"""The migration that carries the four boundary texts into terms, both ways, on PostgreSQL and
on SQLite (a child process with its own database file); and an archive written before terms
restores its boundaries as the terms they became."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from reports.procurement.models import TermEntry
from reports.services.archive import archive_bytes, import_project
from tests.migration_child import run_on_sqlite
from tests.procurement.former_boundaries_rig import exercise


@pytest.mark.django_db(transaction=True)
def test_the_texts_become_terms_and_come_back_on_postgresql() -> None:
    assert settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    exercise()


def test_the_texts_become_terms_and_come_back_on_sqlite(tmp_path: Path) -> None:
    run_on_sqlite(tmp_path, "tests.procurement.former_boundaries_rig")


@pytest.mark.django_db
def test_an_archive_with_boundaries_restores_them_as_terms(personas, settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    archive = archive_bytes(personas["alpha"])
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as source, zipfile.ZipFile(out, "w") as target:
        for entry in source.infolist():
            data = source.read(entry.filename)
            if entry.filename == "data.json":
                rows = json.loads(data)
                volcano = next(r["pk"] for r in rows if r["model"] == "evaluations.candidate")
                rows.append(
                    {
                        "model": "poc.boundary",
                        "pk": 7,
                        "fields": {
                            "candidate": volcano,
                            "license_model": "MIT",
                            "support_terms": "",
                            "upgrade_cadence": "quarterly",
                            "exit_plan": "",
                            "updated_at": "2026-01-02T03:04:05Z",
                        },
                    }
                )
                data = json.dumps(rows).encode()
            elif entry.filename == "manifest.json":
                manifest = json.loads(data)
                manifest["counts"]["poc.Boundary"] = 1
                data = json.dumps(manifest).encode()
            target.writestr(entry.filename, data)
    report = import_project(io.BytesIO(out.getvalue()), slug="alpha-old")
    restored = {e.key: e for e in TermEntry.objects.filter(project=report.project)}
    assert {k: e.value for k, e in restored.items()} == {
        "licence_spdx": "MIT",
        "upgrade_notes": "quarterly",
    }
    assert {e.basis for e in restored.values()} == {"tbc"}
    assert restored["upgrade_notes"].recorded_at.isoformat().startswith("2026-01-02T03:04:05")
