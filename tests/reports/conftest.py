from pathlib import Path
from typing import Any

import pytest

from reports.signing import create_self_signed_p12

PASSPHRASE = "test-passphrase"


@pytest.fixture(scope="session")
def signing_p12(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("signing") / "org.p12"
    create_self_signed_p12(path, PASSPHRASE, subject="Workbench Test Organisation")
    return path


@pytest.fixture(autouse=True)
def _sheet_settings(settings: Any, tmp_path: Path, signing_p12: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.SHEET_SIGNING_P12 = str(signing_p12)
    settings.SHEET_SIGNING_PASSPHRASE = PASSPHRASE


@pytest.fixture
def evaluation(suite: dict[str, Any]) -> dict[str, Any]:
    """Alpha with members in every signing role (alice holds platform and architecture) and a
    few results, so that the sheet has something to say."""
    from decimal import Decimal

    from evaluations.services import membership_set
    from poc import services as poc_services
    from tests.factories import UserFactory

    people = {}
    for role in ("architecture", "procurement", "business"):
        people[role] = UserFactory(username=f"{role}-lead")
        membership_set(project=suite["alpha"], user=people[role], role=role, actor=None)
    membership_set(project=suite["alpha"], user=suite["alice"], role="architecture", actor=None)
    volcano, (quota, job, tenant) = suite["volcano"], suite["actions"]
    poc_services.result_record(candidate=volcano, action=quota, outcome="passed", actor=None)
    poc_services.result_record(
        candidate=volcano,
        action=job,
        outcome="failed",
        failure_cause="训练作业在第 40 步卡住",
        actor=None,
    )
    poc_services.result_record(
        candidate=volcano,
        action=tenant,
        outcome="needs_integration",
        integration_what="LDAP groups",
        integration_owner_team="platform",
        integration_effort_days=Decimal("3.5"),
        actor=None,
    )
    return {**suite, **people}
