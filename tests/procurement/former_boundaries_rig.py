"""The four free-text boundary fields become terms (procurement.0002, poc.0012) without losing a
character, and come back, on the default database whatever its engine. Run in the test process
(PostgreSQL) and in a child process (SQLite)."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("poc", "0011_idempotency_moved"), ("procurement", "0001_initial")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def exercise() -> None:
    old = migrate(BEFORE)
    solution = old.get_model("evaluations", "Solution").objects.create(
        key="former-stack", kind="product", name_en="Stack", name_zh="栈"
    )
    project = old.get_model("evaluations", "Project").objects.create(slug="former", name="Former")
    Candidate = old.get_model("evaluations", "Candidate")
    spdx, prose, empty = (
        Candidate.objects.create(project=project, solution=solution, slug=slug)
        for slug in ("spdx", "prose", "empty")
    )
    Boundary = old.get_model("poc", "Boundary")
    Boundary.objects.create(
        candidate=spdx,
        license_model="apache-2.0",
        support_terms="Community Slack; vendor support by quote",
        upgrade_cadence="",
        exit_plan="Jobs export as YAML\n队列配置导出",
    )
    Boundary.objects.create(
        candidate=prose, license_model="Commercial, per GPU — see the EULA", exit_plan=" keep "
    )
    Boundary.objects.create(candidate=empty)

    new = migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    TermEntry = new.get_model("procurement", "TermEntry")
    found = {(e.candidate_id, e.key): e for e in TermEntry.objects.filter(current=True)}
    assert {k: e.value for k, e in found.items()} == {
        (spdx.pk, "licence_spdx"): "Apache-2.0",
        (spdx.pk, "licence_notes"): "apache-2.0",  # as written: the spelling differs
        (spdx.pk, "support_notes"): "Community Slack; vendor support by quote",
        (spdx.pk, "exit_notes"): "Jobs export as YAML\n队列配置导出",
        (prose.pk, "licence_notes"): "Commercial, per GPU — see the EULA",
        (prose.pk, "exit_notes"): "keep",
    }
    assert {e.basis for e in found.values()} == {"tbc"}
    assert all(e.project_id == project.pk and e.reason for e in found.values())
    with connection.cursor() as cursor:
        assert "poc_boundary" not in connection.introspection.table_names(cursor)

    back = migrate(BEFORE)
    texts = {
        b.candidate_id: (b.license_model, b.support_terms, b.upgrade_cadence, b.exit_plan)
        for b in back.get_model("poc", "Boundary").objects.all()
    }
    assert texts == {
        spdx.pk: (
            "apache-2.0",
            "Community Slack; vendor support by quote",
            "",
            "Jobs export as YAML\n队列配置导出",
        ),
        prose.pk: ("Commercial, per GPU — see the EULA", "", "", "keep"),
    }
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
