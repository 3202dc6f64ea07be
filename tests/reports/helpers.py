"""Shared steps for sheet tests: render a revision for real, and have every role approve it."""

from typing import Any

from reports import services
from reports.models import Sheet, SheetStatus

# Who approves for each default signing role in the `evaluation` fixture's project.
SIGNERS = (
    ("alice", "platform"),
    ("architecture", "architecture"),
    ("procurement", "procurement"),
    ("business", "business"),
    ("bob", "ops"),
)


def rendered(evaluation: dict[str, Any], language: str = "en", layout: str = "decision") -> Sheet:
    """A revision of alpha rendered for real: the decision document, or with `layout="full"`
    every result printed."""
    sheet = services.sheet_generate(
        acknowledgement="known gaps",
        project=evaluation["alpha"],
        language=language,
        actor=evaluation["bob"],
        layout=layout,
    )
    sheet = services.sheet_render(sheet_id=sheet.pk)
    assert sheet is not None and sheet.status == SheetStatus.READY, sheet and sheet.error
    return sheet


def approve_all(
    evaluation: dict[str, Any],
    sheet: Sheet,
    comment: str = "",
    signers: tuple[tuple[str, str], ...] = SIGNERS,
) -> None:
    for person, role in signers:
        services.signoff_record(
            sheet=sheet,
            user=evaluation[person],
            role=role,
            decision="approve",
            sheet_sha256=sheet.sha256,
            comment=comment or f"ok from {role}",
        )
