"""Every write of procurement: terms and their chase (`terms`), the cost model and cost lines
(`costs`)."""

from reports.procurement.services.compatibility import Stack, compatibility_claim
from reports.procurement.services.costs import (
    LineData,
    ModelData,
    cost_line_add,
    cost_line_remove,
    cost_model_save,
)
from reports.procurement.services.line_imports import cost_lines_import
from reports.procurement.services.terms import (
    MAX_REASON,
    TermChange,
    confirmation_set,
    terms_record,
)

__all__ = [
    "MAX_REASON",
    "LineData",
    "ModelData",
    "Stack",
    "compatibility_claim",
    "TermChange",
    "confirmation_set",
    "cost_line_add",
    "cost_line_remove",
    "cost_lines_import",
    "cost_model_save",
    "terms_record",
]
