"""GPU evidence's move into its own app (probes.0001-0002, poc.0010) and the idempotency records'
into evaluations (evaluations.0014, poc.0011), exercised on the default database, whatever its
engine: rows made under the old models come through, with what points at them and their content
types, and back again. Run in the test process (PostgreSQL) and in a child process (SQLite)."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("evaluations", "0013_project_phase_moves"),
    ("poc", "0009_api_token_moved"),
    ("probes", None),
]
MOVED = ("cluster", "proberun", "probenode", "probeoutput", "probebinding")


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state([t for t in targets if t[1]]).apps


def latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def _tables() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


def _labels(apps, model: str) -> set[str]:
    content_types = apps.get_model("contenttypes", "ContentType")
    return set(content_types.objects.filter(model=model).values_list("app_label", flat=True))


def exercise() -> None:
    old = migrate(BEFORE)
    assert {f"poc_{m}" for m in MOVED} <= _tables()
    content_types = old.get_model("contenttypes", "ContentType")
    for model in (*MOVED, "idempotencyrecord"):
        content_types.objects.get_or_create(app_label="poc", model=model)
    solution = old.get_model("evaluations", "Solution").objects.create(
        key="moved-stack", kind="product", name_en="Stack", name_zh="栈"
    )
    project = old.get_model("evaluations", "Project").objects.create(slug="moved", name="Moved")
    candidate = old.get_model("evaluations", "Candidate").objects.create(
        project=project, solution=solution, slug="stack"
    )
    requirement = old.get_model("evaluations", "Requirement").objects.create(
        project=project, feature="GPU inventory", dimension="capability", owner_team="platform"
    )
    action = old.get_model("evaluations", "AcceptanceAction").objects.create(
        project=project,
        requirement=requirement,
        key="gpu-count",
        question="Are all GPUs there?",
        pass_criterion="Eight per node",
        scenario="normal",
    )
    ci_run = old.get_model("poc", "Run").objects.create(project=project, external_id="probe-1")
    cluster = old.get_model("poc", "Cluster").objects.create(
        project=project, candidate=candidate, name="lab", kind="ssh", hosts="10.0.0.5"
    )
    probe_run = old.get_model("poc", "ProbeRun").objects.create(
        project=project,
        candidate=candidate,
        cluster=cluster,
        run=ci_run,
        source="ssh",
        status="succeeded",
        parser_version="1",
        facts_format="workbench-gpu-facts/1",
    )
    node = old.get_model("poc", "ProbeNode").objects.create(
        run=probe_run, host="gpu-1", facts={"gpus": 8}, health={}, gpu_count=8
    )
    old.get_model("poc", "ProbeOutput").objects.create(
        run=probe_run, node=node, name="nvidia-smi -q -x", sha256="a" * 64, size=10
    )
    old.get_model("poc", "ProbeBinding").objects.create(
        project=project, action=action, check_key="gpu_count", params={}
    )
    old.get_model("poc", "IdempotencyRecord").objects.create(
        scope="token:1", key="k-1", request_hash="b" * 64
    )

    new = migrate(latest())
    tables = _tables()
    assert {f"probes_{m}" for m in MOVED} <= tables, tables
    assert not {f"poc_{m}" for m in MOVED} & tables
    assert "evaluations_idempotencyrecord" in tables and "poc_idempotencyrecord" not in tables
    moved_run = new.get_model("probes", "ProbeRun").objects.get()
    assert (moved_run.pk, moved_run.cluster_id, moved_run.run_id) == (
        probe_run.pk,
        cluster.pk,
        ci_run.pk,
    )
    assert new.get_model("probes", "ProbeNode").objects.get().facts == {"gpus": 8}
    output = new.get_model("probes", "ProbeOutput").objects.get()
    assert (output.node_id, output.sha256) == (node.pk, "a" * 64)
    assert new.get_model("probes", "ProbeBinding").objects.get().action_id == action.pk
    assert new.get_model("probes", "Cluster").objects.get().hosts == "10.0.0.5"
    assert new.get_model("evaluations", "IdempotencyRecord").objects.get().key == "k-1"
    # The references still resolve: deleting the CI run clears the probe run's (SET NULL).
    new.get_model("poc", "Run").objects.filter(pk=ci_run.pk).delete()
    assert new.get_model("probes", "ProbeRun").objects.get().run_id is None
    for model in MOVED:
        assert _labels(new, model) == {"probes"}, model
    assert _labels(new, "idempotencyrecord") == {"evaluations"}

    back = migrate(BEFORE)
    assert {f"poc_{m}" for m in MOVED} <= _tables()
    assert back.get_model("poc", "ProbeOutput").objects.get().node_id == node.pk
    assert back.get_model("poc", "Cluster").objects.get().name == "lab"
    assert back.get_model("poc", "IdempotencyRecord").objects.get().key == "k-1"
    for model in (*MOVED, "idempotencyrecord"):
        assert _labels(back, model) == {"poc"}, model

    migrate(latest())
