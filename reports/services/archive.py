"""A project as one archive file, and back: backups, and moving a project to another instance.

The archive is a zip file:

* `manifest.json`: the format, the project, when, how many rows of each kind, the people
  (user names and e-mail addresses) and catalogue entries the rows name, what was left out, and
  each stored file with its SHA-256 and size;
* `data.json`: the rows in Django's serialization format, parents before children;
* `files/<name>`: every stored file the rows name (evidence, raw probe outputs, sheet PDFs).

Everything that belongs to the project travels: framing, memberships, candidates, the acceptance
suite, the whole result history with its evidence, runs, responsibilities, terms, costs and what
is still to be confirmed, probe runs with their raw outputs, check bindings, sheets with their
PDFs and sign-offs, the history chain, and API tokens (as their hashes: a token keeps working
after a restore). The history chain is keyed: the manifest names the key ids its entries were
keyed with, and an instance restores it only when it holds those keys (WORKBENCH_AUDIT_KEYS, the
same id and the same key) and the chain verifies under them. Cluster credentials do not
travel: they are encrypted under this instance's keys and bound to their rows, so a restored
cluster has to be given them again. Idempotency records and queued e-mail notices are transient
and left out.

Import gives every row a new id and rewrites the references; people are matched by user name
(created without a password when missing) and catalogue entries by key. It is all or nothing:
any problem (a file whose hash differs, a reference to a row the archive lacks, a project that
already exists) leaves nothing behind, stored files included.
"""

import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, time
from pathlib import PurePosixPath
from typing import Any

from django.contrib.auth.models import User
from django.core import serializers
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.serializers.base import DeserializationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, models, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from evaluations.audit import SETTING as AUDIT_SETTING
from evaluations.audit import audit_keys
from evaluations.catalog import SOLUTION_TEXT_FIELDS
from evaluations.models import (
    AcceptanceAction,
    ActionKeyRename,
    ApiToken,
    AuditHead,
    Candidate,
    Membership,
    Project,
    ProjectEvent,
    Requirement,
    Solution,
    SolutionKind,
)
from evaluations.selectors import audit_chain_break
from evaluations.services.catalog import TEAM_ENTRY_POSITION
from poc.models import (
    Evidence,
    Outcome,
    Responsibility,
    Result,
    ResultCell,
    Run,
    RunImport,
)
from poc.probes.models import (
    Cluster,
    ProbeBinding,
    ProbeNode,
    ProbeOutput,
    ProbeRun,
)
from reports.models import Sheet, SignOff
from reports.procurement.models import Confirmation, CostLine, CostModel, TermEntry
from reports.procurement.terms import former_terms
from workbench.hashing import sha256_chunks
from workbench.storage import files_removed_on_failure

FORMAT = "workbench-project-archive/1"
# Models that changed app since archives were first written: an older archive names them by
# their old label (data.json in lower case, the manifest's counts as written).
MOVED_MODELS = {
    "poc.ApiToken": "evaluations.ApiToken",
    # GPU evidence became its own app (label "probes").
    "poc.Cluster": "probes.Cluster",
    "poc.ProbeRun": "probes.ProbeRun",
    "poc.ProbeNode": "probes.ProbeNode",
    "poc.ProbeOutput": "probes.ProbeOutput",
    "poc.ProbeBinding": "probes.ProbeBinding",
}
MAX_ARCHIVE_ENTRIES = 1_000_000
MAX_UNPACKED_BYTES = 20 * 1024**3  # what the files of one project may add up to

# Parents before children, and each model's rows of the project.
ROWS: list[tuple[type[models.Model], Callable[[Project], Any]]] = [
    (Project, lambda p: Project.objects.filter(pk=p.pk)),
    (Membership, lambda p: Membership.objects.filter(project=p)),
    (Candidate, lambda p: Candidate.objects.filter(project=p)),
    (Requirement, lambda p: Requirement.objects.filter(project=p)),
    (AcceptanceAction, lambda p: AcceptanceAction.objects.filter(project=p)),
    (ActionKeyRename, lambda p: ActionKeyRename.objects.filter(project=p)),
    (ApiToken, lambda p: ApiToken.objects.filter(project=p)),
    (Cluster, lambda p: Cluster.objects.filter(project=p)),
    (Run, lambda p: Run.objects.filter(project=p)),
    (RunImport, lambda p: RunImport.objects.filter(run__project=p)),
    (Result, lambda p: Result.objects.filter(project=p)),
    (ResultCell, lambda p: ResultCell.objects.filter(project=p)),
    (Evidence, lambda p: Evidence.objects.filter(project=p)),
    (Responsibility, lambda p: Responsibility.objects.filter(project=p)),
    (ProbeRun, lambda p: ProbeRun.objects.filter(project=p)),
    (ProbeNode, lambda p: ProbeNode.objects.filter(run__project=p)),
    (ProbeOutput, lambda p: ProbeOutput.objects.filter(run__project=p)),
    (ProbeBinding, lambda p: ProbeBinding.objects.filter(project=p)),
    (TermEntry, lambda p: TermEntry.objects.filter(project=p)),
    (Confirmation, lambda p: Confirmation.objects.filter(project=p)),
    (CostModel, lambda p: CostModel.objects.filter(project=p)),
    (CostLine, lambda p: CostLine.objects.filter(project=p)),
    (Sheet, lambda p: Sheet.objects.filter(project=p)),
    (SignOff, lambda p: SignOff.objects.filter(sheet__project=p)),
    (ProjectEvent, lambda p: ProjectEvent.objects.filter(project=p)),
    (AuditHead, lambda p: AuditHead.objects.filter(project=p)),
]
LEFT_OUT = [
    "cluster credentials (encrypted under this instance's keys: give them again)",
    "idempotency records and queued e-mail notices (transient)",
]


class _ExactEncoder(DjangoJSONEncoder):
    """Django's encoder keeps milliseconds only; the archive keeps times exactly (history
    entries are hashed over theirs)."""

    def default(self, o: Any) -> Any:
        if isinstance(o, datetime | time):
            text = o.isoformat()
            return text[:-6] + "Z" if text.endswith("+00:00") else text
        return super().default(o)


class ArchiveError(Exception):
    """The archive cannot be written or read back; the message says why, in one line."""


@dataclass
class ImportReport:
    project: Project
    counts: dict[str, int]
    users_created: list[str] = field(default_factory=list)
    files: int = 0
    tokens_skipped: int = 0


def _file_fields(model: type[models.Model]) -> list[models.FileField]:
    return [f for f in model._meta.concrete_fields if isinstance(f, models.FileField)]


def _user_fields(model: type[models.Model]) -> list[models.ForeignKey]:
    return [
        f
        for f in model._meta.concrete_fields
        if isinstance(f, models.ForeignKey) and f.related_model is User
    ]


def _sha256_of(name: str) -> tuple[str, int]:
    with default_storage.open(name, "rb") as handle:
        return sha256_chunks(iter(lambda: handle.read(1024 * 1024), b""))


def export_project(project: Project, target: Any) -> dict[str, int]:
    """Write the project's archive to `target` (a path or a binary file); the row counts."""
    objects: list[models.Model] = []
    counts: dict[str, int] = {}
    user_ids: set[int] = set()
    files: set[str] = set()
    for model, rows in ROWS:
        found = list(rows(project).order_by("pk"))
        counts[model._meta.label] = len(found)
        for row in found:
            if isinstance(row, Cluster):
                row.secrets = ""  # see LEFT_OUT
                row.seen_host_keys = {}
            for user_field in _user_fields(model):
                value = getattr(row, user_field.attname)
                if value is not None:
                    user_ids.add(value)
            for file_field in _file_fields(model):
                name = getattr(row, file_field.attname)
                if name:
                    files.add(str(name))
        objects.extend(found)
    users = [
        {
            "id": user.pk,
            "username": user.get_username(),
            "email": user.email,
            "first_name": user.first_name,
            "last_name": user.last_name,
        }
        for user in User.objects.filter(pk__in=user_ids).order_by("pk")
    ]
    solutions = dict(
        Solution.objects.filter(candidacies__project=project).values_list("pk", "key").distinct()
    )
    team_solutions = _team_solutions(solutions)
    stored: dict[str, dict[str, Any]] = {}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as out:
        for name in sorted(files):
            if not default_storage.exists(name):
                raise ArchiveError(f"the stored file {name} is missing: the archive would lose it")
            digest, size = _sha256_of(name)
            with default_storage.open(name, "rb") as source, out.open(f"files/{name}", "w") as sink:
                for chunk in iter(lambda: source.read(1024 * 1024), b""):
                    sink.write(chunk)
            stored[name] = {"sha256": digest, "size": size}
        out.writestr("data.json", serializers.serialize("json", objects, cls=_ExactEncoder))
        manifest = {
            "format": FORMAT,
            "project": project.slug,
            "exported_at": timezone.now().isoformat(),
            "counts": counts,
            "users": users,
            "solutions": {str(pk): key for pk, key in solutions.items()},
            "team_solutions": team_solutions,
            "left_out": LEFT_OUT,
            "files": stored,
            "history_key_ids": sorted(
                {e.key_id for e in objects if isinstance(e, ProjectEvent) and e.key_id}
            ),
        }
        out.writestr("manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
    return counts


def _safe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


def _read_manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    entries = archive.infolist()
    if len(entries) > MAX_ARCHIVE_ENTRIES:
        raise ArchiveError(f"the archive holds {len(entries)} entries, more than a project has")
    if sum(entry.file_size for entry in entries) > MAX_UNPACKED_BYTES:
        raise ArchiveError("the archive unpacks to more than 20 GiB: refused")
    try:
        manifest = json.loads(archive.read("manifest.json"))
    except KeyError:
        raise ArchiveError("not a project archive: no manifest.json") from None
    except ValueError as exc:
        raise ArchiveError(f"manifest.json is not JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise ArchiveError(f"not a project archive of format {FORMAT} (found {found!r})")
    for key, kind in (("files", dict), ("users", list), ("solutions", dict), ("counts", dict)):
        if not isinstance(manifest.get(key), kind):
            raise ArchiveError(f"manifest.json: {key} is missing or malformed")
    for name in manifest["files"]:
        if not _safe_name(str(name)):
            raise ArchiveError(f"manifest.json names a file outside the archive's folder: {name!r}")
    return manifest


def _restore_file(
    archive: zipfile.ZipFile, name: str, expected: dict[str, Any], created: list[str]
) -> str:
    """Store one archived file after checking its hash; the name it is stored under."""
    try:
        data = archive.read(f"files/{name}")
    except KeyError:
        raise ArchiveError(f"the archive lacks the file {name}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected.get("sha256") or len(data) != expected.get("size"):
        raise ArchiveError(f"the file {name} does not match its SHA-256 in the manifest")
    if default_storage.exists(name) and _sha256_of(name)[0] == digest:
        return name  # the same bytes are stored already (content-addressed names)
    stored = default_storage.save(name, ContentFile(data))
    created.append(stored)
    return stored


def _users(manifest: dict[str, Any], report: ImportReport) -> dict[int, int]:
    mapping: dict[int, int] = {}
    for entry in manifest["users"]:
        try:
            old, username = int(entry["id"]), str(entry["username"])
        except (KeyError, TypeError, ValueError):
            raise ArchiveError("manifest.json: a person without id or user name") from None
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_user(
                username=username,
                email=str(entry.get("email") or ""),
                first_name=str(entry.get("first_name") or "")[:150],
                last_name=str(entry.get("last_name") or "")[:150],
            )  # no password: an administrator sets one, or single sign-on takes over
            report.users_created.append(username)
        mapping[old] = user.pk
    return mapping


# What a team's catalog entry is made of: it travels with the archive, since the catalog
# elsewhere has only the shipped entries (seed_catalog).
TEAM_SOLUTION_FIELDS = (
    "key",
    "kind",
    "vendor",
    *(f"{name}_{language}" for name in SOLUTION_TEXT_FIELDS for language in ("en", "zh")),
)


def _team_solutions(solutions: dict[int, str]) -> list[dict[str, Any]]:
    """The teams' own entries among the project's candidates, with their routes (routes
    first, so that an import can create them in order)."""
    chosen = Solution.objects.filter(pk__in=solutions).select_related("route")
    team = {s.key: s for s in chosen if s.is_team_entry}
    for product in list(team.values()):
        if product.route is not None and product.route.is_team_entry:
            team[product.route.key] = product.route
    ordered = sorted(team.values(), key=lambda s: (s.kind != SolutionKind.ROUTE, s.key))
    return [
        {
            **{name: getattr(s, name) for name in TEAM_SOLUTION_FIELDS},
            "route": s.route.key if s.route is not None else None,
        }
        for s in ordered
    ]


def _restore_team_solutions(manifest: dict[str, Any]) -> None:
    """Create the archive's team entries this catalog lacks (an entry with the same key here
    is kept as it is)."""
    entries = manifest.get("team_solutions") or []
    if not isinstance(entries, list):
        raise ArchiveError("manifest.json: team_solutions is malformed")
    for entry in entries:
        if not isinstance(entry, dict) or not str(entry.get("key", "")).startswith(
            Solution.TEAM_KEY_PREFIX
        ):
            raise ArchiveError("manifest.json: a team entry without a team key")
        if Solution.objects.filter(key=entry["key"]).exists():
            continue
        route = None
        if entry.get("route"):
            route = Solution.objects.filter(key=entry["route"]).first()
            if route is None:
                raise ArchiveError(
                    f"team entry {entry['key']!r} names the route {entry['route']!r}, "
                    "which is neither here nor in the archive"
                )
        solution = Solution(
            **{name: str(entry.get(name) or "") for name in TEAM_SOLUTION_FIELDS},
            route=route,
            position=TEAM_ENTRY_POSITION,
        )
        try:
            solution.full_clean()
        except ValidationError as exc:
            raise ArchiveError(f"team entry {entry['key']!r}: {exc.messages[0]}") from None
        solution.save()


def _solutions(manifest: dict[str, Any]) -> dict[int, int]:
    mapping: dict[int, int] = {}
    keys = {int(pk): str(key) for pk, key in manifest["solutions"].items()}
    found = dict(Solution.objects.filter(key__in=keys.values()).values_list("key", "pk"))
    for old, key in keys.items():
        if key not in found:
            raise ArchiveError(
                f"the catalogue here has no solution {key!r} (run manage.py seed_catalog first)"
            )
        mapping[old] = found[key]
    return mapping


def import_project(source: Any, *, slug: str | None = None) -> ImportReport:
    """Restore a project from an archive (a path or a binary file), under its own slug or
    `slug`. ArchiveError with the reason when anything is wrong; nothing is left behind then."""
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArchiveError(f"not a zip archive: {exc}") from None
    with archive:
        manifest = _read_manifest(archive)
        try:
            text = archive.read("data.json").decode("utf-8")
        except KeyError:
            raise ArchiveError("not a project archive: no data.json") from None
        except UnicodeDecodeError:
            raise ArchiveError("data.json is not UTF-8 text") from None
        try:
            with files_removed_on_failure() as created, transaction.atomic():
                return _import_rows(archive, manifest, text, slug, created)
        except IntegrityError as exc:
            raise ArchiveError(
                f"the rows do not fit this database: {str(exc).splitlines()[0]}"
            ) from None


def _import_rows(
    archive: zipfile.ZipFile,
    manifest: dict[str, Any],
    text: str,
    slug: str | None,
    created: list[str],
) -> ImportReport:
    allowed = {model._meta.label for model, _rows in ROWS}
    ids: dict[str, dict[Any, Any]] = {label: {} for label in allowed}
    counts: dict[str, int] = {}
    project: Project | None = None
    report = ImportReport(project=Project(), counts=counts)
    users = _users(manifest, report)
    _restore_team_solutions(manifest)
    solutions = _solutions(manifest)
    files: dict[str, str] = {}
    moved = {old.lower(): new.lower() for old, new in MOVED_MODELS.items()}
    try:
        data = json.loads(text)
        if not isinstance(data, list):
            raise ArchiveError("data.json is not a list of rows")
        for item in data:
            if isinstance(item, dict) and item.get("model") in moved:
                item["model"] = moved[item["model"]]
        data, former = _former_boundaries(data)
        objects = list(serializers.deserialize("python", data, ignorenonexistent=False))
    except (DeserializationError, ValueError, RecursionError) as exc:
        raise ArchiveError(f"data.json cannot be read: {str(exc).splitlines()[0][:300]}") from None
    for wrapped in objects:
        row = wrapped.object
        label = row._meta.label
        if label not in allowed:
            raise ArchiveError(
                f"data.json holds rows of {label}, which a project archive never has"
            )
        old_pk = row.pk
        for relation in row._meta.concrete_fields:
            if not relation.is_relation:
                continue
            old = getattr(row, relation.attname)
            if old is None:
                continue
            target = relation.related_model._meta.label  # type: ignore[union-attr]
            mapping = (
                users
                if target == "auth.User"
                else solutions
                if target == "evaluations.Solution"
                else ids.get(target)
            )
            if mapping is None or old not in mapping:
                raise ArchiveError(
                    f"{label} {old_pk}: {relation.name} names {target} {old}, which the archive "
                    "does not hold"
                )
            setattr(row, relation.attname, mapping[old])
        for file_field in _file_fields(type(row)):
            name = str(getattr(row, file_field.attname) or "")
            if not name:
                continue
            if name not in files:
                expected = manifest["files"].get(name)
                if not isinstance(expected, dict):
                    raise ArchiveError(
                        f"{label} {old_pk} names the file {name}, not in the archive"
                    )
                files[name] = _restore_file(archive, name, expected, created)
            setattr(row, file_field.attname, files[name])
        if isinstance(row, Project):
            if project is not None:
                raise ArchiveError("data.json holds more than one project")
            row.slug = slug or row.slug
            if Project.objects.filter(slug=row.slug).exists():
                raise ArchiveError(
                    f"a project {row.slug!r} exists here already (import under another slug)"
                )
        if isinstance(row, ApiToken) and ApiToken.objects.filter(prefix=row.prefix).exists():
            # The project is restored beside the one it came from: its tokens stay that one's.
            ids[label][old_pk] = None
            report.tokens_skipped += 1
            continue
        if not isinstance(row, AuditHead):
            row.pk = None
        models.Model.save_base(row, raw=True, force_insert=True)
        if isinstance(row, Project):
            project = row
        ids[label][old_pk] = row.pk
        counts[label] = counts.get(label, 0) + 1
    if project is None:
        raise ArchiveError("data.json holds no project")
    expected_counts = {
        MOVED_MODELS.get(k, k): int(v)
        for k, v in manifest["counts"].items()
        if int(v) and k != "poc.Boundary"
    }
    if former:
        label = TermEntry._meta.label
        expected_counts[label] = expected_counts.get(label, 0) + former
    if report.tokens_skipped:
        token_label = ApiToken._meta.label
        counts[token_label] = counts.get(token_label, 0) + report.tokens_skipped
    if counts != expected_counts:
        raise ArchiveError(f"data.json does not hold the rows the manifest counts ({counts})")
    _check_history(project)
    # Cells keep a copy of their latest result's effort; an archive written before they did
    # holds none, so it is copied here from the restored results.
    ResultCell.objects.filter(project=project, outcome=Outcome.NEEDS_INTEGRATION).update(
        integration_effort_days=Subquery(
            Result.objects.filter(pk=OuterRef("result_id")).values("integration_effort_days")[:1]
        )
    )
    report.project, report.files = project, len(files)
    return report


def _check_history(project: Project) -> None:
    """The restored history must verify here: under keys this instance holds, unchanged."""
    needed = set(
        ProjectEvent.objects.filter(project=project)
        .exclude(key_id="")
        .values_list("key_id", flat=True)
    )
    held = dict(audit_keys())
    missing = sorted(needed - set(held))
    if missing:
        raise ArchiveError(
            f"the project history is keyed with key id(s) {', '.join(missing)}, which "
            f"{AUDIT_SETTING} here does not hold: add the exporting instance's key(s) after "
            "this instance's current one, then import again"
        )
    found = audit_chain_break(project)
    if found is not None and not found.unsealed:
        raise ArchiveError(
            f"the project history does not verify here at entry {found.seq}: {found.problem} "
            "(a key of the same id but other bytes, or a changed archive)"
        )


def _former_boundaries(data: list[Any]) -> tuple[list[Any], int]:
    """An archive written before terms holds a candidate's four boundary texts as a poc.boundary
    row: they come back as the terms they became (reports.procurement.terms.former_terms), to
    be confirmed. The rows, and how many term entries were made."""
    projects = {
        item.get("pk"): item.get("fields", {}).get("project")
        for item in data
        if isinstance(item, dict) and item.get("model") == "evaluations.candidate"
    }
    rows: list[Any] = []
    made = 0
    for item in data:
        if not (isinstance(item, dict) and item.get("model") == "poc.boundary"):
            rows.append(item)
            continue
        fields = item.get("fields") or {}
        candidate = fields.get("candidate")
        for former in ("license_model", "support_terms", "upgrade_cadence", "exit_plan"):
            for key, value in former_terms(former, str(fields.get(former) or "")).items():
                made += 1
                rows.append(
                    {
                        "model": "procurement.termentry",
                        "pk": made,
                        "fields": {
                            "project": projects.get(candidate),
                            "candidate": candidate,
                            "key": key,
                            "value": value,
                            "basis": "tbc",
                            "reason": f"Carried over from the former boundary field {former}.",
                            "current": True,
                            "recorded_at": fields.get("updated_at"),
                        },
                    }
                )
    return rows, made


def archive_bytes(project: Project) -> bytes:
    """The archive in memory (tests and small projects)."""
    buffer = io.BytesIO()
    export_project(project, buffer)
    return buffer.getvalue()
