from typing import Any

import pytest

from tests.factories import make_actions


@pytest.fixture(autouse=True)
def _media(settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def suite(personas: dict[str, Any]) -> dict[str, Any]:
    """Alpha has three actions under one requirement; beta has one of its own."""
    requirement, actions = make_actions(
        personas["alpha"],
        [
            ("quota-hit", "resource_shortage"),
            ("real-job", "real_task"),
            ("cross-tenant", "permission_overreach"),
        ],
    )
    _, (beta_action,) = make_actions(
        personas["beta"], [("beta-only", "real_task")], feature="Beta", owner_team="ops"
    )
    return {**personas, "requirement": requirement, "actions": actions, "beta_action": beta_action}
