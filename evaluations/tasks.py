"""Evaluations' periodic work for Celery workers (tasks carry no credentials)."""

from celery import shared_task

from evaluations.sso.ldap import directory_sync


@shared_task(ignore_result=True)
def directory_sync_task() -> None:
    """Deactivate accounts gone from the LDAP directory and make roles follow groups (beat,
    every LDAP_SYNC_MINUTES when LDAP is configured)."""
    directory_sync()
