"""The OpenAPI schema is valid for the tools people feed it to: openapi-spec-validator accepts
it whole (every default meets its own type and pattern), as served at /api/schema/."""

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def served_schema() -> dict:
    answer = APIClient().get("/api/schema/", {"format": "json"})
    assert answer.status_code == 200
    return answer.json()


def test_the_served_schema_is_a_valid_openapi_document() -> None:
    schema = served_schema()
    assert schema["openapi"].startswith("3.")
    validate(schema)


def test_the_validator_refuses_a_default_against_its_own_pattern() -> None:
    # What the schema held before: a slug field whose default "" fails the slug pattern.
    schema = served_schema()
    run = schema["components"]["schemas"]["RunInput"]["properties"]["candidate"]
    run.update({"type": "string", "pattern": "^[-a-zA-Z0-9_]+$", "default": ""})
    run.pop("oneOf", None)
    with pytest.raises(OpenAPIValidationError):
        validate(schema)
