"""Checking a sealed sheet: is the signature intact, does it cover the whole file, who signed
and when, which revision it claims, and does that revision's stored hash match."""

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BytesIO

from django.utils.translation import gettext as _
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext

from reports.attachments import embedded
from reports.models import Sheet
from reports.signing import outside_event_loop

KEYWORDS = re.compile(
    r"workbench-sheet;project=([\w-]{1,80});revision=(\d{1,9});sha256=([0-9a-f]{64})", re.ASCII
)


@dataclass
class VerifyReport:
    valid: bool = False
    intact: bool = False
    covers_whole_file: bool = False
    signer: str = ""
    signed_at: str = ""
    project: str = ""
    revision: int | None = None
    content_sha256: str = ""
    matches_stored_snapshot: bool | None = None
    # Byte for byte the file this workbench sealed for that revision (members only).
    matches_sealed_file: bool | None = None
    trusted_signer: bool | None = None
    # The files embedded in the PDF (the revision's full record): name, description,
    # relationship, size and SHA-256; and whether the attached snapshot is the one the
    # revision's hash names (None when the file carries none, as sheets sealed before did).
    attachments: list[dict[str, object]] = field(default_factory=list)
    snapshot_attached_matches: bool | None = None
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def verify_pdf(
    data: bytes,
    *,
    trusted_pem: bytes | None = None,
    may_compare: Callable[[str], bool] | None = None,
) -> VerifyReport:
    """Check a PDF. `may_compare(project_slug)` says whether the caller may learn if that
    project stores the revision the file names (members only); without it, the comparison is
    made (the server's own command line)."""
    report = VerifyReport()
    if not data.startswith(b"%PDF-"):
        report.problems.append(_("not a PDF file"))
        return report
    try:
        reader = PdfFileReader(BytesIO(data), strict=False)
        signatures = reader.embedded_signatures
    except Exception as exc:  # a damaged file must give a reason, never a crash
        report.problems.append(_("unreadable PDF: %(error)s") % {"error": _describe(exc)})
        return report
    if not signatures:
        report.problems.append(_("the PDF carries no signature"))
    _read_keywords(reader, report)
    _read_attachments(data, report)
    for signature in signatures[-1:]:
        try:
            context = _context(trusted_pem)
            status = outside_event_loop(validate_pdf_signature, signature, context)
        except Exception as exc:
            report.problems.append(
                _("the signature cannot be checked: %(error)s") % {"error": _describe(exc)}
            )
            break
        report.intact = bool(status.intact)
        report.covers_whole_file = status.coverage == SignatureCoverageLevel.ENTIRE_FILE
        report.signer = status.signing_cert.subject.human_friendly
        report.signed_at = (
            status.signer_reported_dt.isoformat() if status.signer_reported_dt else ""
        )
        report.trusted_signer = bool(status.trusted) if trusted_pem else None
        if not status.intact:
            report.problems.append(_("the signed bytes were changed (digest mismatch)"))
        if not status.valid:
            report.problems.append(_("the signature value does not verify"))
        if not report.covers_whole_file:
            report.problems.append(_("the signature does not cover the whole file"))
        padding_intact = _reserved_space_untouched(data, signature.byte_range)
        if not padding_intact:
            report.problems.append(
                _(
                    "the space reserved for the signature was changed after signing (bytes "
                    "after the signature are not the zeros it was sealed with)"
                )
            )
        report.valid = bool(
            status.intact and status.valid and report.covers_whole_file and padding_intact
        )
    if report.project and (may_compare is None or may_compare(report.project)):
        _match_stored(report, hashlib.sha256(data).hexdigest())
    if report.matches_stored_snapshot is False or report.snapshot_attached_matches is False:
        report.valid = False
    # An intact signature proves only that nobody changed the file since someone signed it.
    # It is a sheet this workbench sealed if the signer is its organisation's certificate, or
    # if the file is the very one it stored (which still holds after a certificate rotation).
    if report.valid and not (report.trusted_signer or report.matches_sealed_file):
        report.valid = False
        if report.matches_sealed_file is None:
            report.problems.append(
                _("signed by a certificate other than this workbench's: not a sheet it sealed")
            )
        else:
            report.problems.append(
                _(
                    "signed by a certificate other than this workbench's, and not the sealed "
                    "file it stores: not a sheet it sealed"
                )
            )
    return report


def _der_length(blob: bytes) -> int | None:
    """The length of the DER value at the start of `blob` (tag, length and content)."""
    if len(blob) < 2:
        return None
    first = blob[1]
    if first < 0x80:
        return 2 + first
    count = first & 0x7F
    if count == 0 or count > 4 or len(blob) < 2 + count:
        return None
    return 2 + count + int.from_bytes(blob[2 : 2 + count], "big")


def _reserved_space_untouched(data: bytes, byte_range: object) -> bool:
    """Whether the signature's /Contents holds the CMS signature followed by zeros only.

    The signature covers every byte of the file except its own /Contents string, which is
    reserved larger than the signature and padded with zeros. Bytes changed in that padding
    change no digest, so a digest check calls such a file intact; it is still not the file that
    was sealed, and poppler's pdfsig stops calling it "Total document signed". Both verdicts
    agree when this check fails the file.
    """
    try:
        start = int(byte_range[0]) + int(byte_range[1])  # type: ignore[index]
        end = int(byte_range[2])  # type: ignore[index]
    except (TypeError, ValueError, IndexError, KeyError):
        return False
    gap = data[start:end].strip()
    if not (gap.startswith(b"<") and gap.endswith(b">")):
        return False
    try:
        contents = bytes.fromhex(gap[1:-1].decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return False
    used = _der_length(contents)
    if used is None or used > len(contents):
        return False
    return not any(contents[used:])


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def _context(trusted_pem: bytes | None) -> ValidationContext:
    if trusted_pem:
        from asn1crypto import pem, x509

        _type, _headers, der = pem.unarmor(trusted_pem)
        return ValidationContext(trust_roots=[x509.Certificate.load(der)], allow_fetching=False)
    # No trust anchors at all (not the operating system's list): without the organisation's
    # certificate the report says nothing about trust, only about integrity.
    return ValidationContext(trust_roots=[], allow_fetching=False)


def _read_keywords(reader: PdfFileReader, report: VerifyReport) -> None:
    try:
        info = reader.trailer_view.get("/Info")
        keywords = str(info.get_object().get("/Keywords", "")) if info else ""
    except Exception:
        keywords = ""
    found = KEYWORDS.search(keywords)
    if not found:
        report.problems.append(_("no workbench sheet identity in the PDF metadata"))
        return
    report.project, report.revision, report.content_sha256 = (
        found.group(1),
        int(found.group(2)),
        found.group(3),
    )


def _read_attachments(data: bytes, report: VerifyReport) -> None:
    """List the embedded files; the attached snapshot must hash to the revision's hash."""
    try:
        files = embedded(data)
    except Exception as exc:  # a damaged file must give a reason, never a crash
        report.problems.append(
            _("the attached files cannot be read: %(error)s") % {"error": _describe(exc)}
        )
        return
    report.attachments = [
        {k: f[k] for k in ("name", "description", "relationship", "size", "sha256")} for f in files
    ]
    for f in files:
        if f["in_af"] != 1:
            report.problems.append(
                _("%(name)s is listed %(n)s times among the document's associated files")
                % {"name": f["name"], "n": f["in_af"]}
            )
    snapshots = [f for f in files if str(f["name"]).endswith("-snapshot.json")]
    if snapshots and report.content_sha256:
        report.snapshot_attached_matches = all(
            f["sha256"] == report.content_sha256 for f in snapshots
        )
        if not report.snapshot_attached_matches:
            report.problems.append(
                _("the attached snapshot is not the one the revision's hash names")
            )


def _match_stored(report: VerifyReport, file_sha256: str) -> None:
    if not report.project or report.revision is None:
        return
    sheet = Sheet.objects.filter(project__slug=report.project, revision=report.revision).first()
    if sheet is None:
        report.matches_stored_snapshot = False
        report.problems.append(_("no such revision is stored here"))
        return
    report.matches_stored_snapshot = sheet.sha256 == report.content_sha256
    if sheet.sealed_sha256:
        report.matches_sealed_file = sheet.sealed_sha256 == file_sha256
    if not report.matches_stored_snapshot:
        report.problems.append(_("the content hash differs from the stored snapshot"))
