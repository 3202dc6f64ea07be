"""Every write to the PoC app, split by topic; import from here (`from poc import services`)."""

from poc.services.ingest import (
    IngestError,
    JUnitImport,
    ResultRow,
    RunData,
    junit_ingest,
    results_ingest,
    validate_rows,
)
from poc.services.responsibilities import BulkAssignment, responsibilities_assign
from poc.services.results import (
    detect_content_type,
    evidence_attach_file,
    evidence_attach_link,
    responsibility_clear,
    responsibility_set,
    result_record,
    result_record_with_evidence,
    sanitize_filename,
)

__all__ = [
    "BulkAssignment",
    "IngestError",
    "ResultRow",
    "RunData",
    "detect_content_type",
    "evidence_attach_file",
    "evidence_attach_link",
    "responsibilities_assign",
    "responsibility_clear",
    "responsibility_set",
    "result_record",
    "result_record_with_evidence",
    "results_ingest",
    "junit_ingest",
    "JUnitImport",
    "sanitize_filename",
    "validate_rows",
]
