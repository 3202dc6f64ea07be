import json
from typing import Any

from rest_framework.test import APIClient

from evaluations import services


def token_client(project: Any, scopes: tuple[str, ...] = ("read", "results:write"), **kwargs: Any):
    """An API client carrying a fresh bearer token for `project`, and the token row."""
    token, raw = services.api_token_create(
        project=project, name="ci", scopes=list(scopes), actor=None, **kwargs
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client, token, raw


def post_results(client: APIClient, slug: str, payload: Any, **headers: str):
    return client.post(
        f"/api/v1/projects/{slug}/results/",
        json.dumps(payload),
        content_type="application/json",
        headers=headers,
    )


def payload(rows: list[dict[str, Any]], run: str = "pipeline-1", **run_fields: Any) -> dict:
    return {"run": {"external_id": run, **run_fields}, "results": rows}
