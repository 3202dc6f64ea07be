"""Import and export of an acceptance suite: YAML round trip, CSV, bad files rejected whole."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluations import selectors, services, suite_io
from evaluations.catalog import load_templates
from evaluations.models import AcceptanceAction, Requirement, TemplateSet

pytestmark = pytest.mark.django_db


@pytest.fixture
def filled(personas):
    services.template_catalog_seed(sets=load_templates())
    for key in ("multi-tenancy", "controlled-failures"):
        services.template_set_apply(
            project=personas["alpha"], template_set=TemplateSet.objects.get(key=key), actor=None
        )
    services.requirement_create(
        project=personas["alpha"],
        actor=None,
        feature="Vendor says: magic",
        dimension="cost_exit",
        owner_team="procurement",
        importance="could",
    )
    return personas


def _suite(project) -> list[tuple]:
    rows = []
    for group in selectors.suite_for_project(project):
        for r in group.requirements:
            rows.append(
                (
                    r.feature,
                    r.dimension,
                    r.owner_team,
                    r.importance,
                    [
                        (
                            a.key,
                            a.scenario,
                            a.question,
                            a.steps,
                            a.expected_evidence,
                            a.pass_criterion,
                        )
                        for a in r.shown_actions
                    ],
                )
            )
    return rows


def _upload(client, slug, name, content):
    return client.post(
        reverse("evaluations:suite_import", kwargs={"slug": slug}),
        {
            "file": SimpleUploadedFile(
                name, content.encode() if isinstance(content, str) else content
            )
        },
    )


@pytest.mark.parametrize("fmt", ["yaml", "csv"])
def test_round_trip_into_an_empty_project(filled, login, fmt) -> None:
    source = _suite(filled["alpha"])
    assert len(source) >= 5
    exported = login(filled["alice"]).get(
        reverse("evaluations:suite_export", kwargs={"slug": "alpha", "fmt": fmt})
    )
    assert exported.status_code == 200
    assert exported["Content-Disposition"].endswith(f'.{fmt}"')
    response = _upload(login(filled["charlie"]), "beta", f"suite.{fmt}", exported.content)
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert _suite(filled["beta"]) == source


def test_reimport_of_the_same_file_changes_nothing(filled, login) -> None:
    client = login(filled["alice"])
    exported = client.get(
        reverse("evaluations:suite_export", kwargs={"slug": "alpha", "fmt": "yaml"})
    )
    before = _suite(filled["alpha"])
    counts = (Requirement.objects.count(), AcceptanceAction.objects.count())
    assert _upload(client, "alpha", "suite.yaml", exported.content).status_code == 302
    assert _suite(filled["alpha"]) == before
    assert (Requirement.objects.count(), AcceptanceAction.objects.count()) == counts


BAD_YAML = """\
format: workbench-acceptance-suite/1
requirements:
- feature: Fair share between teams
  dimension: scheduling
  owner_team: platform
  actions:
  - key: fair-share-basic
    scenario: queue_preemption
    question: Do two teams share by weight?
    pass_criterion: Shares match weights within 10%.
  - key: Bad Key
    scenario: real_task
    question: q
    pass_criterion: p
- feature: ""
  dimension: galaxy
  owner_team: ops
  actions:
  - key: fair-share-basic
    scenario: teleport
    question: ""
    pass_criterion: p
"""


def test_bad_yaml_is_rejected_whole_with_line_numbers(filled, login) -> None:
    before = _suite(filled["beta"])
    response = _upload(login(filled["charlie"]), "beta", "suite.yaml", BAD_YAML)
    assert response.status_code == 422
    body = response.content.decode()
    assert "line 11" in body and "Bad Key" in body
    assert "line 15" in body and "feature is empty" in body and "galaxy" in body
    assert "line 19" in body and "used twice (first on line 7)" in body and "teleport" in body
    assert _suite(filled["beta"]) == before  # the good first requirement was not stored either


def test_bad_csv_is_rejected_whole_with_line_numbers(filled, login) -> None:
    header = ",".join(suite_io.CSV_COLUMNS)
    content = (
        f"{header}\n"
        "Quota,tenancy,platform,must,quota-hit,resource_shortage,What at quota?,,,Refused clearly\n"
        "Quota,tenancy,platform,must,quota-2,resource_shortage,,,,\n"
        "Audit,tenancy,nobody,must,audit-1,permission_overreach,Is it logged?,,,Logged\n"
    )
    response = _upload(login(filled["charlie"]), "beta", "suite.csv", content)
    assert response.status_code == 422
    body = response.content.decode()
    assert "line 3" in body and "question is empty" in body
    assert "line 4" in body and "owner_team &#x27;nobody&#x27;" in body
    assert not Requirement.objects.filter(project=filled["beta"]).exists()


def test_csv_missing_columns_and_unreadable_files(filled, login) -> None:
    client = login(filled["charlie"])
    assert (
        "missing columns"
        in _upload(client, "beta", "s.csv", "feature,dimension\nx,y\n").content.decode()
    )
    assert "not UTF-8" in _upload(client, "beta", "s.yaml", b"\xff\xfe\x00bad").content.decode()
    assert "empty" in _upload(client, "beta", "s.yaml", b"").content.decode()
    assert ".yaml, .yml or .csv" in _upload(client, "beta", "s.txt", "x").content.decode()
    assert "not valid YAML" in _upload(client, "beta", "s.yaml", "a: [unclosed\n").content.decode()
    assert not Requirement.objects.filter(project=filled["beta"]).exists()


def test_yaml_bomb_is_refused(filled, login) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for n in range(1, 9):
        prev = chr(ord("a") + n - 1)
        cur = chr(ord("a") + n)
        bomb += f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
    bomb += "requirements: []\n"
    response = _upload(login(filled["charlie"]), "beta", "s.yaml", bomb)
    assert response.status_code == 422
    assert "too large" in response.content.decode()


def test_import_needs_write_access_and_membership(filled, login) -> None:
    url = reverse("evaluations:suite_import", kwargs={"slug": "alpha"})
    upload = SimpleUploadedFile("s.yaml", b"requirements: []\n")
    assert login(filled["dave"]).post(url, {"file": upload}).status_code == 403
    assert login(filled["charlie"]).post(url, {"file": upload}).status_code == 404


def test_csv_export_keeps_formulas_as_text_and_round_trips_them(filled, login) -> None:
    import csv
    import io

    formulas = [
        '=HYPERLINK("http://evil.example","x")',
        "+cmd|' /C calc'!A0",
        "@SUM(A1:A9)",
        "-1+1",
    ]
    requirement = services.requirement_create(
        project=filled["alpha"],
        actor=None,
        feature=formulas[0],
        dimension="scheduling",
        owner_team="platform",
        importance="must",
    )
    services.action_create(
        requirement=requirement,
        actor=None,
        key="formula-test",
        question=formulas[1],
        pass_criterion=formulas[2],
        steps=formulas[3],
        scenario="real_task",
    )
    source = _suite(filled["alpha"])
    exported = login(filled["alice"]).get(
        reverse("evaluations:suite_export", kwargs={"slug": "alpha", "fmt": "csv"})
    )
    cells = [c for row in csv.reader(io.StringIO(exported.content.decode())) for c in row]
    assert not any(c[:1] in "=+-@" and c for c in cells)  # nothing a spreadsheet would run
    assert "'" + formulas[0] in cells and "'" + formulas[2] in cells
    response = _upload(login(filled["charlie"]), "beta", "suite.csv", exported.content)
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert _suite(filled["beta"]) == source  # the apostrophes come off again on import


@pytest.mark.parametrize("fmt", ["yaml", "csv"])
def test_a_nul_character_in_an_import_is_named_with_its_line(filled, login, fmt) -> None:
    client = login(filled["alice"])
    exported = client.get(
        reverse("evaluations:suite_export", kwargs={"slug": "alpha", "fmt": fmt})
    ).content.decode()
    lines = exported.splitlines()
    lines[2] = lines[2] + "\x00"
    before = _suite(filled["beta"])
    response = _upload(login(filled["charlie"]), "beta", f"suite.{fmt}", "\n".join(lines))
    assert response.status_code == 422
    assert "line 3" in response.content.decode() and "NUL" in response.content.decode()
    assert _suite(filled["beta"]) == before
