"""The demo project shows what procurement records: published licences, illustrative figures
marked as estimates, and an open item someone chases; running the demo again adds nothing."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from reports.procurement.models import Confirmation, CostLine, TermEntry

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")  # the demo stores evidence files


def test_the_demo_has_terms_once(client) -> None:
    call_command("demo", stdout=StringIO())
    entries = TermEntry.objects.filter(project__slug="demo")
    assert entries.filter(key="licence_spdx", candidate__slug="volcano").get().value == "Apache-2.0"
    estimates = entries.filter(basis="estimate")
    assert estimates.exists() and all("Illustrative" in e.reason for e in estimates)
    count = entries.count()
    call_command("demo", stdout=StringIO())
    assert TermEntry.objects.filter(project__slug="demo").count() == count
    assert Confirmation.objects.filter(project__slug="demo", closed_at=None).count() == 1

    client.post(reverse("login"), {"username": "procurement", "password": "workbench-demo"})
    terms = client.get(reverse("procurement:terms", kwargs={"slug": "demo"})).content.decode()
    assert "Apache-2.0 AND LicenseRef-NVIDIA-Software-License" in terms and "$4,500.00" in terms
    costs = client.get(reverse("procurement:costs", kwargs={"slug": "demo"})).content.decode()
    assert "GPU software subscription" in costs and "incomplete" not in costs
    assert CostLine.objects.filter(project__slug="demo").count() == 12
    # The demo counts capacity and reads every candidate against its baseline.
    assert CostLine.objects.filter(project__slug="demo", candidate=None).count() == 2
    assert "Against the baseline" in costs and "GPUs needed" in costs
    listed = client.get(reverse("procurement:to_confirm", kwargs={"slug": "demo"})).content.decode()
    assert "Asked the vendor for the severity-1 response time" in listed
