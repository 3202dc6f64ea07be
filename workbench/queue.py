"""Queueing work for the Celery workers by task name.

Services hand work to the workers through `send`, naming the task, instead of importing the
tasks module, which imports the services: dependencies run from tasks to services only, with
no cycle hidden in an import inside a function. Each name a service sends is checked against
the tasks the workers register (tests/workbench/test_queue.py). Routing (CELERY_TASK_ROUTES)
goes by the name, as for `task.delay()`.
"""

from workbench.celery import app


def send(task: str, *args: object) -> None:
    """Queue the registered task `task` (e.g. "reports.tasks.sheet_render_task") with `args`;
    raises what the broker raises when it cannot take the message."""
    app.send_task(task, args=args)
