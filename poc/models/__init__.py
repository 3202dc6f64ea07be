"""The PoC app's data: results and their evidence, responsibilities, CI integration. GPU
evidence (clusters, probe runs) is its own app: poc.probes."""

from poc.models.results import (
    AppendOnlyError,
    Change,
    Delivery,
    Evidence,
    EvidenceKind,
    Outcome,
    Party,
    Responsibility,
    ResponsibilityArea,
    Result,
    ResultCell,
    Run,
    RunImport,
    Source,
    evidence_upload_to,
    outcome_detail_problems,
)

__all__ = [
    "outcome_detail_problems",
    "AppendOnlyError",
    "Change",
    "Delivery",
    "Evidence",
    "EvidenceKind",
    "Outcome",
    "Party",
    "Responsibility",
    "ResponsibilityArea",
    "Result",
    "ResultCell",
    "Run",
    "RunImport",
    "Source",
    "evidence_upload_to",
]
