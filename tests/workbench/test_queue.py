"""Services queue work by task name (workbench.queue.send): every name they send is a task the
workers register, so a typo cannot pass unnoticed until a worker refuses the message."""

import ast
from pathlib import Path

from workbench.celery import app

ROOT = Path(__file__).resolve().parents[2]
APPS = ("workbench", "evaluations", "poc", "reports")


def task_names_sent() -> dict[str, str]:
    """Module-level `NAME_TASK = "dotted.name"` constants of the apps, by where they are."""
    found = {}
    for app_name in APPS:
        for path in sorted((ROOT / app_name).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if (
                    isinstance(node, ast.Assign)
                    and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)
                ):
                    for target in node.targets:
                        if isinstance(target, ast.Name) and target.id.endswith("_TASK"):
                            where = f"{path.relative_to(ROOT)}:{target.id}"
                            found[where] = node.value.value
    return found


def test_every_task_name_a_service_sends_is_registered() -> None:
    app.loader.import_default_modules()
    sent = task_names_sent()
    assert len(sent) >= 5  # worker check, probe run, render, seal, notices
    unknown = {where: name for where, name in sent.items() if name not in app.tasks}
    assert unknown == {}


def test_sent_tasks_are_routed_by_their_name() -> None:
    router = app.amqp.router
    assert router.route({}, "reports.tasks.sheet_render_task")["queue"].name == "reports"
    assert router.route({}, "poc.tasks.probe_run_task")["queue"].name == "probes"
