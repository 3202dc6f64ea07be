"""Evaluations' periodic work for Celery workers (tasks carry no credentials)."""

from importlib import import_module

from celery import shared_task

from evaluations.services import idempotency


@shared_task(ignore_result=True)
def directory_sync_task() -> None:
    """Deactivate accounts gone from the LDAP directory and make roles follow groups (beat,
    every LDAP_SYNC_MINUTES when LDAP is configured). The LDAP module is loaded here, not at
    import: its packages are an optional extra that a worker without LDAP does not have."""
    import_module("evaluations.sso.ldap").directory_sync()


@shared_task(ignore_result=True)
def idempotency_prune_task() -> None:
    """Forget old Idempotency-Key responses (beat, hourly)."""
    idempotency.idempotency_records_prune()
