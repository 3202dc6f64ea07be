"""GPU memory: ECC mode and errors, remapped rows, retired pages."""

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from poc.probes.facts import GpuFacts, NodeFacts
from poc.probes.rules.health.base import Findings

# Legacy dynamic page retirement keeps at most 64 retired pages per GPU ("Supported a maximum of
# 64 retirements for the frame buffer": NVIDIA, GPU Memory Error Management, Row Remapping,
# https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/row-remapping.html). A GPU at the limit
# can retire no further page, whatever the cause of the retirements.
RETIRED_PAGES_LIMIT = 64


def ecc_mode(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """ECC disabled on a GPU that has it: degraded. Memory errors then go uncorrected and
    uncounted, and rows can be neither remapped nor pages retired."""
    mode = gpu["ecc_mode_current"]
    if mode is None:
        found.unknown("ecc_mode", _("ECC mode was not reported (the GPU may not support ECC)."))
    elif mode is False:
        if gpu["ecc_mode_pending"]:
            message = _("ECC is disabled; it is set to be enabled at the next GPU reset.")
        else:
            message = _("ECC is disabled: memory errors are neither corrected nor counted.")
        found.problem("ecc_disabled", "degraded", False, message)


def ecc_errors(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Uncorrected ECC errors since the driver loaded: failed (data may have been corrupted and
    the GPU needs a reset). Uncorrected errors only in the lifetime count: degraded (they
    happened before the last reset, and the memory has been retired or remapped since)."""
    volatile = gpu["ecc_volatile_uncorrected"]
    aggregate = gpu["ecc_aggregate_uncorrected"]
    if volatile is not None and volatile > 0:
        found.problem(
            "ecc_uncorrected_volatile",
            "failed",
            volatile,
            ngettext(
                "%(count)s uncorrected ECC error since the driver loaded.",
                "%(count)s uncorrected ECC errors since the driver loaded.",
                volatile,
            )
            % {"count": volatile},
        )
        return
    if aggregate is not None and aggregate > 0:
        found.problem(
            "ecc_uncorrected_aggregate",
            "degraded",
            aggregate,
            ngettext(
                "%(count)s uncorrected ECC error over the GPU's lifetime (none since the driver "
                "loaded).",
                "%(count)s uncorrected ECC errors over the GPU's lifetime (none since the driver "
                "loaded).",
                aggregate,
            )
            % {"count": aggregate},
        )
    if volatile is None:
        if gpu["ecc_mode_current"] is False:
            reason = _("ECC is disabled, so memory errors are not counted.")
        else:
            reason = _("The count of uncorrected ECC errors was not reported.")
        found.unknown("ecc_errors", reason)


def _retired_pages_reported(gpu: GpuFacts) -> bool:
    return any(
        gpu[key] is not None
        for key in ("retired_pages_single_bit", "retired_pages_double_bit", "retired_pages_pending")
    )


def _remapped_rows_reported(gpu: GpuFacts) -> bool:
    return any(
        gpu[key] is not None
        for key in (
            "remapped_rows_correctable",
            "remapped_rows_uncorrectable",
            "remapped_rows_pending",
            "remapped_rows_failure",
        )
    )


def remapped_rows(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Row remapping (Ampere and newer): a remapping failure is failed (NVIDIA's policy: replace
    the GPU); a pending remapping is degraded (a GPU reset activates it); rows remapped after
    uncorrectable errors are degraded (handled, but a history of uncorrectable errors is worth a
    look before acceptance)."""
    if not _remapped_rows_reported(gpu):
        if _retired_pages_reported(gpu):
            found.skip()  # an older GPU: it retires pages instead, see retired_pages
        else:
            found.unknown(
                "remapped_rows",
                _(
                    "Row remapping was not reported (Ampere and newer datacenter GPUs report it; "
                    "the driver hides it while MIG instances exist)."
                ),
            )
        return
    failure = gpu["remapped_rows_failure"]
    pending = gpu["remapped_rows_pending"]
    uncorrectable = gpu["remapped_rows_uncorrectable"]
    if failure:
        found.problem(
            "remapped_rows_failure",
            "failed",
            True,
            _("A row remapping has failed: the GPU's memory cannot be repaired (replace the GPU)."),
        )
    if pending:
        found.problem(
            "remapped_rows_pending",
            "degraded",
            True,
            _("Rows are waiting to be remapped: the GPU needs a reset."),
        )
    if uncorrectable is not None and uncorrectable > 0:
        found.problem(
            "remapped_rows_uncorrectable",
            "degraded",
            uncorrectable,
            ngettext(
                "%(count)s row was remapped after an uncorrectable error.",
                "%(count)s rows were remapped after uncorrectable errors.",
                uncorrectable,
            )
            % {"count": uncorrectable},
        )
    if failure is None or pending is None:
        found.unknown(
            "remapped_rows",
            _("Whether a row remapping is pending or has failed was not reported."),
        )


def retired_pages(gpu: GpuFacts, node: NodeFacts, found: Findings) -> None:
    """Dynamic page retirement (before Ampere): 64 retired pages (the most a GPU can retire) is
    failed; pages retired after double-bit errors are degraded; retirements waiting for a
    driver reload or reset are degraded."""
    if not _retired_pages_reported(gpu):
        if _remapped_rows_reported(gpu):
            found.skip()  # Ampere and newer remap rows instead, see remapped_rows
        else:
            found.unknown(
                "retired_pages",
                _("Retired pages were not reported (GPUs before Ampere report them)."),
            )
        return
    single = gpu["retired_pages_single_bit"]
    double = gpu["retired_pages_double_bit"]
    pending = gpu["retired_pages_pending"]
    total = (single or 0) + (double or 0)
    if total >= RETIRED_PAGES_LIMIT:
        found.problem(
            "retired_pages_limit",
            "failed",
            total,
            _(
                "%(count)s pages retired: the GPU has reached the limit of %(limit)s and cannot "
                "retire more."
            )
            % {"count": total, "limit": RETIRED_PAGES_LIMIT},
        )
    elif double is not None and double > 0:
        found.problem(
            "retired_pages_double_bit",
            "degraded",
            double,
            ngettext(
                "%(count)s page was retired after a double-bit ECC error.",
                "%(count)s pages were retired after double-bit ECC errors.",
                double,
            )
            % {"count": double},
        )
    if pending:
        found.problem(
            "retired_pages_pending",
            "degraded",
            True,
            _("Pages are waiting to be retired: the driver must be reloaded or the GPU reset."),
        )
    if (single is None or double is None) and total < RETIRED_PAGES_LIMIT:
        found.unknown(
            "retired_pages",
            _("Not every retired-page count was reported, so the limit could not be checked."),
        )
    if pending is None:
        found.unknown(
            "retired_pages", _("Whether pages are waiting to be retired was not reported.")
        )
