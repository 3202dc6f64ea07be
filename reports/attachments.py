"""The complete record of a revision, as files embedded in its PDF.

The body of the sheet is a short decision document; the record travels inside the same file
and is covered by the same signature: the results it froze (the latest of every cell, with
their evidence references) as CSV and XLSX in the sheet's language, the evidence index with
every item's SHA-256 as CSV, the frozen snapshot itself (the bytes its hash covers), the probe
facts as JSON, and the cost model as CSV when the project has one.

Every file is made from the stored snapshot alone, byte for byte the same each time (the
spreadsheet's dates and its zip entries' times are the revision's): the verifier rebuilds them
and compares. Each is embedded with a description, its media type and its relationship to the
document (Data, or Source for the snapshot it was rendered from), listed once in the
catalogue's associated files (/AF) as PDF/A-3 asks.
"""

import hashlib
import io
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _

from reports.exports import OutcomeCell, plain_rows, to_csv, to_xlsx
from reports.models import Sheet


@dataclass(frozen=True)
class Attached:
    name: str
    data: bytes
    description: str
    relationship: str  # "Data" or "Source" (PDF 2.0 / PDF/A-3 AFRelationship)
    mime: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def size(self) -> int:
        return len(self.data)


class AttachmentsTooLarge(ValueError):
    """The revision's record is larger than the limit; the message names the sizes."""


def _name(candidate: dict[str, Any]) -> str:
    return f"{candidate['solution']} {candidate['version']}".strip()


def results_rows(snapshot: dict[str, Any]) -> list[list[object]]:
    """Every frozen cell, one row each: candidate, group, importance, action, outcome, its
    reason or integration need, and the evidence it cites."""
    matrix = snapshot["matrix"]
    by_slug = {c["slug"]: c for c in snapshot["candidates"]}
    evidence: dict[tuple[str, str], list[str]] = {}
    for item in snapshot.get("evidence", []):
        reference = item["sha256"] or item["url"]
        if item.get("superseded"):
            reference += f" ({_('superseded')})"
        evidence.setdefault((item["candidate"], item["action"]), []).append(reference)
    rows: list[list[object]] = [
        [
            str(_("Candidate")),
            str(_("Key")),
            str(_("Group of questions")),
            str(_("Importance")),
            str(_("Acceptance action")),
            str(_("Question")),
            str(_("Scenario")),
            str(_("Outcome")),
            str(_("Failure cause")),
            str(_("What must be integrated")),
            str(_("Owning team")),
            str(_("Effort (person-days)")),
            str(_("Kind of delivery")),
            str(_("Delivered by")),
            str(_("Evidence")),
        ]
    ]
    for column, slug in enumerate(matrix["columns"]):
        candidate = by_slug.get(slug, {"solution": slug, "version": ""})
        causes = {f["action"]: f.get("cause", "") for f in candidate.get("failed", [])}
        needs = {i["action"]: i for i in candidate.get("needs_integration", [])}
        for action, outcomes in zip(matrix["actions"], matrix["rows"], strict=True):
            key = action["key"]
            need = needs.get(key, {})
            rows.append(
                [
                    _name(candidate),
                    slug,
                    action.get("dimension", ""),
                    action.get("importance", ""),
                    key,
                    action.get("question") or key,
                    action.get("scenario", ""),
                    OutcomeCell(outcomes[column]),
                    causes.get(key, ""),
                    need.get("what", ""),
                    need.get("owner_team", ""),
                    need.get("effort_days", ""),
                    need.get("delivery", ""),
                    need.get("delivered_by", ""),
                    " | ".join(evidence.get((slug, key), [])),
                ]
            )
    return rows


def evidence_rows(snapshot: dict[str, Any]) -> list[list[object]]:
    rows: list[list[object]] = [
        [
            str(_("Candidate")),
            str(_("Acceptance action")),
            str(_("Name")),
            str(_("Kind")),
            "SHA-256",
            str(_("Size (bytes)")),
            str(_("Address")),
            str(_("Recorded by")),
            str(_("Recorded at (UTC)")),
            str(_("Carried from result")),
            str(_("Superseded")),
        ]
    ]
    for e in snapshot.get("evidence", []):
        rows.append(
            [
                e.get("candidate_name") or e["candidate"],
                e["action"],
                e["name"],
                e["kind"],
                e["sha256"],
                e["size"],
                e["url"],
                e["recorded_by"],
                e["recorded_at"],
                e.get("carried_from_result") or "",
                str(_("yes")) if e.get("superseded") else "",
            ]
        )
    return rows


def cost_rows(snapshot: dict[str, Any]) -> list[list[object]]:
    costs = snapshot["costs"]
    years = costs["horizon"]
    rows: list[list[object]] = [
        [
            str(_("Candidate")),
            str(_("Category")),
            str(_("Currency")),
            *(str(_("Year %(n)s") % {"n": y + 1}) for y in range(years)),
        ]
    ]
    for c in costs["candidates"]:
        for category in c["categories"]:
            rows.append(
                [c["candidate"], category["label"], costs["currency"], *category["per_year"]]
            )
        rows.append([c["candidate"], str(_("Year's cost")), costs["currency"], *c["per_year"]])
        if c.get("missing"):
            rows.append([c["candidate"], str(_("incomplete:")) + " " + "; ".join(c["missing"])])
    return rows


def sheet_attachments(sheet: Sheet) -> list[Attached]:
    """The revision's record as files, in the sheet's language."""
    snapshot: dict[str, Any] = sheet.snapshot
    stem = f"{sheet.project.slug}-r{sheet.revision}"
    when = sheet.created_at.replace(microsecond=0, tzinfo=None)
    with translation.override(sheet.language):
        results = results_rows(snapshot)
        plain = plain_rows(results)  # written twice: as CSV and as XLSX
        files = [
            Attached(
                f"{stem}-results.csv",
                to_csv(results, plain=plain),
                str(_("Every result this revision froze, one row per candidate and action")),
                "Data",
                "text/csv",
            ),
            Attached(
                f"{stem}-results.xlsx",
                to_xlsx(results, str(_("Results")), created=when, plain=plain),
                str(_("The same results as a spreadsheet")),
                "Data",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            ),
            Attached(
                f"{stem}-evidence.csv",
                to_csv(evidence_rows(snapshot)),
                str(_("The evidence index: every frozen evidence item with its SHA-256")),
                "Data",
                "text/csv",
            ),
            Attached(
                f"{stem}-snapshot.json",
                sheet.snapshot_json.encode(),
                str(
                    _(
                        "The frozen snapshot this document was rendered from (its SHA-256 "
                        "is the revision's hash)"
                    )
                ),
                "Source",
                "application/json",
            ),
            Attached(
                f"{stem}-probe-facts.json",
                json.dumps(
                    snapshot.get("probe_facts", []), ensure_ascii=False, indent=1, sort_keys=True
                ).encode(),
                str(_("GPU probe facts of each candidate's latest probe run")),
                "Data",
                "application/json",
            ),
        ]
        if snapshot.get("costs"):
            files.append(
                Attached(
                    f"{stem}-costs.csv",
                    to_csv(cost_rows(snapshot)),
                    str(_("The cost model: each candidate's cost per category and year")),
                    "Data",
                    "text/csv",
                )
            )
    return files


def check_size(files: list[Attached], limit: int) -> None:
    total = sum(f.size for f in files)
    if total > limit:
        largest = max(files, key=lambda f: f.size)
        raise AttachmentsTooLarge(
            _(
                "The record to attach is %(total)s MB (largest: %(name)s, %(size)s MB); the "
                "limit is %(limit)s MB."
            )
            % {
                "total": round(total / 1_048_576, 1),
                "name": largest.name,
                "size": round(largest.size / 1_048_576, 1),
                "limit": round(limit / 1_048_576, 1),
            }
        )


def embed(pdf: bytes, files: list[Attached], when: datetime) -> bytes:
    """The PDF with `files` embedded: a file specification each (name, description, media
    type, size, MD5 checksum, dates, relationship), the name tree of embedded files, and the
    catalogue's /AF array listing each once."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import (
        ArrayObject,
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
        NumberObject,
        TextStringObject,
        create_string_object,
    )

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    stamp = TextStringObject(when.strftime("D:%Y%m%d%H%M%SZ"))
    specs = []
    for f in sorted(files, key=lambda f: f.name):
        stream = DecodedStreamObject()
        stream.set_data(f.data)
        stream.update(
            {
                NameObject("/Type"): NameObject("/EmbeddedFile"),
                NameObject("/Subtype"): NameObject("/" + f.mime),
                NameObject("/Params"): DictionaryObject(
                    {
                        NameObject("/Size"): NumberObject(f.size),
                        NameObject("/CheckSum"): create_string_object(
                            hashlib.md5(f.data, usedforsecurity=False).digest()
                        ),
                        NameObject("/CreationDate"): stamp,
                        NameObject("/ModDate"): stamp,
                    }
                ),
            }
        )
        spec = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Filespec"),
                NameObject("/F"): TextStringObject(f.name),
                NameObject("/UF"): TextStringObject(f.name),
                NameObject("/Desc"): TextStringObject(f.description),
                NameObject("/AFRelationship"): NameObject("/" + f.relationship),
                NameObject("/EF"): DictionaryObject(
                    {NameObject("/F"): writer._add_object(stream.flate_encode())}
                ),
            }
        )
        specs.append((f.name, writer._add_object(spec)))
    names = ArrayObject()
    for name, reference in specs:
        names.extend([TextStringObject(name), reference])
    root = writer._root_object
    tree = root.get("/Names")
    tree = tree.get_object() if tree is not None else DictionaryObject()
    tree[NameObject("/EmbeddedFiles")] = DictionaryObject({NameObject("/Names"): names})
    root[NameObject("/Names")] = tree
    root[NameObject("/AF")] = ArrayObject(reference for _name, reference in specs)
    # PDF/A asks the document information to agree with the XMP metadata. The signature's
    # writer appends its own name to /Producer but writes only its own name into the XMP;
    # without a /Producer here, both say the same after the seal.
    info = writer._info.get_object() if writer._info is not None else None
    if isinstance(info, DictionaryObject) and "/Producer" in info:
        del info["/Producer"]
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def embedded(pdf: bytes) -> list[dict[str, Any]]:
    """The files a PDF carries: name, description, relationship, size and SHA-256, in name
    order, and how many times the catalogue's /AF lists each."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    root: Any = reader.trailer["/Root"]
    listed: dict[str, int] = {}
    for reference in root.get("/AF", []):
        spec = reference.get_object()
        name = str(spec.get("/UF") or spec.get("/F"))
        listed[name] = listed.get(name, 0) + 1
    tree = root.get("/Names", {}).get("/EmbeddedFiles", {}).get("/Names", [])
    found = []
    for i in range(0, len(tree), 2):
        spec = tree[i + 1].get_object()
        data = spec["/EF"]["/F"].get_object().get_data()
        name = str(spec.get("/UF") or spec.get("/F"))
        found.append(
            {
                "name": name,
                "description": str(spec.get("/Desc", "")),
                "relationship": str(spec.get("/AFRelationship", "")).lstrip("/"),
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "in_af": listed.get(name, 0),
                "data": data,
            }
        )
    return sorted(found, key=lambda f: f["name"])
