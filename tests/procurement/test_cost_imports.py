"""Cost lines in bulk: a CSV or XLSX file on the cost page, or a list over the API. Every row
is checked first; one bad row refuses the whole file, naming each problem with its row, and
nothing is added."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from openpyxl import Workbook

from evaluations.models import ProjectEvent
from evaluations.services import membership_set
from reports.procurement.lines_io import COLUMNS, read, template_csv
from reports.procurement.models import CostLine
from reports.procurement.services import ModelData, cost_model_save
from tests.factories import UserFactory
from tests.poc.api_helpers import token_client

pytestmark = pytest.mark.django_db

GOOD = (
    "candidate,category,kind,label,low,expected,high,currency,basis,reference,valid_until\n"
    "VOLCANO,support,per_year,Support,1,2,3,USD,quote,Q-1,2099-01-01\n"
    "baseline,operations,fte,Ops,1,1,2,,estimate,,\n"
)


@pytest.fixture
def buyer(personas):
    user = UserFactory(username="erin")
    membership_set(project=personas["alpha"], user=user, role="procurement", actor=None)
    cost_model_save(project=personas["alpha"], data=ModelData(fte_cost=1000), actor=None)
    return user


def _upload(client, name: str, data: bytes):  # type: ignore[no-untyped-def]
    url = reverse("procurement:cost_lines_import", kwargs={"slug": "alpha"})
    return client.post(url, {"file": SimpleUploadedFile(name, data)})


def test_a_good_file_adds_every_line_once(personas, buyer, login) -> None:
    answer = _upload(login(buyer), "lines.csv", ("\ufeff" + GOOD).encode())
    assert answer.status_code == 302
    support = CostLine.objects.get(label="Support")
    assert support.candidate == personas["volcano"] and support.reference == "Q-1"
    assert CostLine.objects.get(label="Ops").candidate is None  # the baseline
    event = ProjectEvent.objects.get(verb="costs.lines_imported")
    assert event.after == {"lines": 2}


def test_one_bad_row_refuses_the_file_naming_each_row(personas, buyer, login) -> None:
    bad = GOOD + (
        "kueue,support,per_year,X,1,2,3,USD,,,\n"
        "volcano,support,per_year,Y,5,2,3,USD,,,\n"
        "volcano,support,per_year,Z,1,2,3,USD,,,31/12/2027\n"
    )
    answer = _upload(login(buyer), "lines.csv", bad.encode())
    assert answer.status_code == 422
    page = answer.content.decode()
    assert "Row 4: kueue is not a candidate of this project" in page
    assert "Row 5: The figures must run low ≤ expected ≤ high." in page
    assert "Row 6: valid_until must be a date, YYYY-MM-DD, not 31/12/2027." in page
    assert not CostLine.objects.exists()


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("lines.txt", b"x", "Upload a .csv or .xlsx file."),
        ("lines.csv", b"\xff\xfe\x00bad", "The CSV file is not UTF-8."),
        ("lines.csv", b"", "The submitted file is empty."),
        ("lines.csv", b"\n\n", "The file is empty."),
        ("lines.csv", b"candidate,category\n", "The header lacks kind, label, low"),
        ("lines.csv", b"candidate,category,kind,label,low,expected,high,colour\n", "Unknown"),
        ("lines.xlsx", b"not a workbook", "The file is not an XLSX workbook."),
    ],
)
def test_an_unreadable_file_is_named(personas, buyer, login, name, data, says) -> None:
    answer = _upload(login(buyer), name, data)
    assert answer.status_code == 422 and says in answer.content.decode()
    assert not CostLine.objects.exists()


def test_xlsx_reads_as_csv_does_and_the_template_reads_back(personas, buyer) -> None:
    book = Workbook()
    sheet = book.active
    for line in GOOD.splitlines():
        sheet.append([int(v) if v.isdigit() else v for v in line.split(",")])
    out = io.BytesIO()
    book.save(out)
    from_xlsx = read(out.getvalue(), "lines.xlsx")
    from_csv = read(GOOD.encode(), "lines.csv")
    assert [r.values for r in from_xlsx] == [r.values for r in from_csv]
    template = read(template_csv(), "template.csv")
    assert len(template) == 2 and set(template[0].values) == set(COLUMNS)


def test_observers_cannot_import(personas, buyer, login) -> None:
    answer = _upload(login(personas["dave"]), "lines.csv", GOOD.encode())
    assert answer.status_code == 403 and not CostLine.objects.exists()


def test_the_api_adds_lines_all_or_nothing(personas, buyer) -> None:
    client, _token, _raw = token_client(personas["alpha"], scopes=("read", "costs:write"))
    url = "/api/v1/projects/alpha/costs/lines/"
    line = {
        "candidate": "volcano", "category": "support", "kind": "per_year", "label": "Support",
        "low": 1, "expected": 2.5, "high": 3, "currency": "USD",
    }  # fmt: skip
    refused = client.post(url, {"lines": [line, {**line, "high": 1}]}, format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == ["Row 2: The figures must run low ≤ expected ≤ high."]
    assert not CostLine.objects.exists()
    added = client.post(url, {"lines": [line]}, format="json")
    assert added.status_code == 201 and CostLine.objects.get().expected == 2.5
    reader, _t, _r = token_client(personas["alpha"], scopes=("read",))
    assert reader.post(url, {"lines": [line]}, format="json").status_code == 403


def test_the_api_sets_the_model_and_names_what_is_wrong(personas, buyer) -> None:
    client, _token, _raw = token_client(personas["alpha"], scopes=("read", "costs:write"))
    url = "/api/v1/projects/alpha/costs/model/"
    bad = client.put(url, {"horizon_years": 50}, format="json")
    assert bad.status_code == 400 and "between 1 and 10, not 50" in bad.json()["detail"]
    unknown = client.put(url, {"capacity": "rented"}, format="json")
    assert unknown.status_code == 400
    good = client.put(
        url,
        {"currency": "eur", "horizon_years": 4, "capacity": "cloud", "gpu_hour_price": "2.5"},
        format="json",
    )
    assert good.status_code == 200
    model = personas["alpha"].cost_model
    model.refresh_from_db()
    assert (model.currency, model.horizon_years, model.capacity) == ("EUR", 4, "cloud")
