"""The running header of a sheet shows the project's name as written, whatever it holds."""

import subprocess
from typing import Any

import pytest

from evaluations.models import Project
from tests.reports.helpers import rendered

pytestmark = pytest.mark.django_db


def test_the_header_shows_ampersands_quotes_and_angle_brackets_as_written(
    evaluation: dict[str, Any],
) -> None:
    name = 'R&D "GPU" <Lab> \\ </style>'
    Project.objects.filter(pk=evaluation["alpha"].pk).update(name=name)
    evaluation["alpha"].refresh_from_db()
    sheet = rendered(evaluation)
    text = subprocess.run(
        ["pdftotext", "-f", "2", "-l", "2", "-layout", sheet.pdf.path, "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    header = text.splitlines()[0]
    assert f"{name} · r{sheet.revision}" in header, header
    assert "&amp;" not in text
