"""API tokens moved from poc to evaluations (evaluations.0012, reports.0011, poc.0009): the rows,
the foreign keys that point at them and the content type survive, both ways."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("evaluations", "0011_solution_team_entries"), ("poc", "0008_cell_integration_effort")]
AFTER = [("evaluations", "0012_api_tokens"), ("poc", "0009_api_token_moved")]


def migrate(targets: list[tuple[str, str]]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_tokens_and_what_points_at_them_survive_the_move() -> None:
    try:
        old = migrate(BEFORE)
        Project = old.get_model("evaluations", "Project")
        OldToken = old.get_model("poc", "ApiToken")
        Run, RunImport = old.get_model("poc", "Run"), old.get_model("poc", "RunImport")
        ContentType.objects.get_or_create(app_label="poc", model="apitoken")
        project = Project.objects.create(slug="moved", name="Moved")
        token = OldToken.objects.create(
            project=project, name="ci", prefix="abcd1234", token_hash="f" * 64, scopes=["read"]
        )
        run = Run.objects.create(project=project, external_id="nightly")
        RunImport.objects.create(run=run, token=token)

        new = migrate(AFTER)
        Token = new.get_model("evaluations", "ApiToken")
        moved = Token.objects.get()
        assert (moved.pk, moved.prefix, moved.scopes) == (token.pk, "abcd1234", ["read"])
        assert new.get_model("poc", "RunImport").objects.get().token_id == moved.pk
        labels = set(
            ContentType.objects.filter(model="apitoken").values_list("app_label", flat=True)
        )
        assert labels == {"evaluations"}
        with connection.cursor() as cursor:
            tables = connection.introspection.table_names(cursor)
        assert "evaluations_apitoken" in tables and "poc_apitoken" not in tables

        back = migrate(BEFORE)  # and back again: poc's table, its row and content type
        assert back.get_model("poc", "ApiToken").objects.get().prefix == "abcd1234"
        assert back.get_model("poc", "RunImport").objects.get().token_id == token.pk
        labels = set(
            ContentType.objects.filter(model="apitoken").values_list("app_label", flat=True)
        )
        assert labels == {"poc"}
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
