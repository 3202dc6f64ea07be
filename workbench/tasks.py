from celery import Task, shared_task

from workbench.services import worker_check_complete


@shared_task(bind=True, acks_late=True)
def worker_check_task(self: Task, check_id: int) -> None:
    worker_check_complete(check_id=check_id, hostname=self.request.hostname or "")
