"""The JUnit and evidence endpoints check their query and their upload with input serializers:
a refusal names the parameter or field and what is wrong with it, and stores nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from poc.models import Evidence, Result, Run
from tests.poc.api_helpers import payload, post_results, token_client

pytestmark = pytest.mark.django_db
JUNIT = b'<testsuite name="s"><testcase name="quota-hit" classname="c"/></testsuite>'


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("run=ci-1", "query parameter candidate is required"),
        ("candidate=volcano&run=", "query parameter run may not be empty"),
        ("candidate=volcano&run=" + "r" * 201, "query parameter run is longer than 200"),
        (
            "candidate=volcano&run=ci-1&supersede_evidence=maybe",
            "query parameter supersede_evidence must be true or false",
        ),
    ],
    ids=["no-candidate", "empty-run", "long-run", "flag-not-a-flag"],
)
def test_a_bad_junit_query_is_named_and_nothing_is_stored(suite, query, detail) -> None:
    client, _token, _raw = token_client(suite["alpha"])
    response = client.post(
        f"/api/v1/projects/alpha/junit/?{query}", JUNIT, content_type="application/xml"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith(detail)
    assert not Run.objects.exists() and not Result.objects.exists()


@pytest.mark.parametrize("flag", ["TRUE", "False", "1", "0"])
def test_the_supersede_flag_is_true_or_false_in_any_case_or_one_or_zero(suite, flag) -> None:
    client, _token, _raw = token_client(suite["alpha"])
    query = f"candidate=volcano&run=ci-1&supersede_evidence={flag}"
    response = client.post(
        f"/api/v1/projects/alpha/junit/?{query}", JUNIT, content_type="application/xml"
    )
    assert response.status_code == 201, response.content
    assert Result.objects.filter(action__key="quota-hit").count() == 1


def test_an_evidence_post_without_its_file_names_the_field(suite) -> None:
    client, _token, _raw = token_client(suite["alpha"])
    row = {"candidate": "volcano", "action": "quota-hit", "outcome": "passed"}
    assert post_results(client, "alpha", payload([row])).status_code == 201
    result = Result.objects.get()
    url = f"/api/v1/results/{result.pk}/evidence/"
    response = client.post(url, {"log": "all green"}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {"detail": "file is required (send it as multipart field 'file')"}
    response = client.post(url, {"file": "all green"}, format="multipart")
    assert response.status_code == 400 and response.json()["detail"].startswith("file: ")
    assert not Evidence.objects.exists()
    upload = SimpleUploadedFile("run.log", b"all green\n")
    assert client.post(url, {"file": upload}, format="multipart").status_code == 201
