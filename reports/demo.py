"""The demo project as a whole, and its procurement sheets (development only).

`demo_build` writes the demo project (evaluations), its PoC (poc, poc.probes), its terms and
costs (reports.procurement) and freezes the first revision of its sheet, once: a project built
before is left as its people have made it since (one from an earlier demo gets what it lacks).
The slow parts run on the worker, after the web server is up, the way the product runs them:
the revision's PDF is rendered by the render task its generation queues, and
`demo_sheets_task` then carries the story on, a step at a time (`demo_sheets_advance`): every
role approves the first revision (whose seal the last approval queues), the teams' later work
is recorded, a second revision is frozen and, once rendered, some roles approve it while the
others still have to decide. Where a PDF cannot be rendered (no Pango), the revision says why,
as any other does, and the story goes on without its sign-offs.
"""

import logging

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.storage import default_storage
from django.db import transaction

from evaluations.demo import DEMO_SLUG
from evaluations.models import Project
from evaluations.services import demo_seed
from poc.demo import demo_built, demo_followups, demo_people, demo_results
from poc.models import Evidence, Result
from poc.probes.models import ProbeOutput
from reports.models import Sheet, SheetStatus, SignOff
from reports.procurement.demo import demo_costs, demo_terms
from reports.services import sheet_generate, signoff_record
from workbench.queue import send

log = logging.getLogger(__name__)
DEMO_SHEETS_TASK = "reports.tasks.demo_sheets_task"
GENERATOR = "architecture"
FIRST_REASON = (
    "Generated for the steering meeting: the open cells, the areas nobody holds yet and the "
    "support response time still to be confirmed are known and tracked."
)
SECOND_REASON = (
    "Regenerated after the Slurm nodes got Apptainer; the remaining gaps are the same as in "
    "revision 1."
)
# Who approves the second revision before the first look: procurement and business have not
# decided yet.
SECOND_SIGNERS = ("platform", "architecture", "ops")
COMMENTS = {
    "platform": "The platform team can run either Kubernetes candidate with the listed "
    "integration work.",
    "architecture": "Integration needs are sized and owned; identity and audit come first.",
    "ops": "Operations can carry Volcano or Slurm with the alerting gaps closed.",
    "procurement": "Terms are estimates until the quotes arrive; the model holds them as such.",
    "business": "Approved for the budget round on the basis of the expected costs.",
}
WAITING = (SheetStatus.PENDING, SheetStatus.RENDERING)


def demo_build(*, rebuild: bool = False) -> tuple[Project, list[str]]:
    """The demo project with its users, PoC, terms, costs and first revision; with `rebuild`,
    the demo project (and only it) is deleted first and built again."""
    if rebuild:
        demo_delete()
    with transaction.atomic():
        found = Project.objects.filter(slug=DEMO_SLUG).first()
        # Built once: then only the accounts are checked and the sheets' story taken up again,
        # so that nothing people changed since (a freeze for sign-off included) is touched.
        fill = found is None or not demo_built(found)
        project, usernames = demo_seed(fill=fill)
        if fill:
            demo_results(project)
            demo_terms(project)
            demo_costs(project)
        demo_sheets_start(project)
    return project, usernames


def demo_sheets_start(project: Project) -> None:
    """Freeze the first revision of a project that has none (its PDF is queued for the
    worker), and queue the rest of the story when some of it is still to be done."""
    if not Sheet.objects.filter(project=project).exists():
        try:
            sheet_generate(
                project=project,
                language="en",
                actor=demo_people().get(GENERATOR),
                acknowledgement=FIRST_REASON,
            )
        except ValidationError as exc:  # too many renders waiting: the next run freezes it
            log.warning("the demo's first revision is not frozen: %s", exc)
            return
    if _next_step(project, demo_people()):
        project_id = project.pk
        transaction.on_commit(lambda: _queue(project_id))


def _queue(project_id: int) -> None:
    try:
        send(DEMO_SHEETS_TASK, project_id)
    except Exception as exc:  # noqa: BLE001 - the next `manage.py demo` queues it again
        log.warning("could not queue the demo sheets: %s: %s", type(exc).__name__, exc)


def _is_demo(sheet: Sheet, people: dict[str, User]) -> bool:
    generator = people.get(GENERATOR)
    return generator is not None and sheet.generated_by_id == generator.pk


def _next_step(project: Project, people: dict[str, User]) -> str:
    """What the demo's sheet story waits for: "render" (the worker's rendering), "sign first",
    "second" (the later work and the second revision), "sign second", or "" (nothing: done,
    or the revisions are no longer the demo's to carry on)."""
    sheets = {s.revision: s for s in Sheet.objects.filter(project=project, revision__lte=2)}
    first, second = sheets.get(1), sheets.get(2)
    if first is None or not _is_demo(first, people):
        return ""
    if first.status in WAITING or (second is not None and second.status in WAITING):
        return "render"
    if first.status == SheetStatus.READY and not first.signoffs.exists():
        return "sign first"
    if second is None:
        return "second"
    if (
        second.status == SheetStatus.READY
        and _is_demo(second, people)
        and not second.signoffs.exists()
    ):
        return "sign second"
    return ""


def _approve(sheet: Sheet, roles: list[str], people: dict[str, User]) -> None:
    with transaction.atomic():
        for role in roles:
            user = people.get(role)
            if user is None:
                continue
            signoff_record(
                sheet=sheet,
                user=user,
                role=role,
                decision="approve",
                sheet_sha256=sheet.sha256,
                comment=COMMENTS.get(role, ""),
            )


def demo_sheets_advance(project_id: int) -> bool:
    """Take the demo's sheet story as far as it goes now (the worker's task, again until
    done); False while it waits for the worker to render a revision."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return True
    people = demo_people()
    while step := _next_step(project, people):
        if step == "render":
            return False
        try:
            _take(project, step, people)
        except (ValidationError, PermissionDenied) as exc:  # a person changed the project
            log.warning("the demo sheets stop at %r: %s", step, exc)
            return True
    return True


def _take(project: Project, step: str, people: dict[str, User]) -> None:
    if step == "sign first":
        first = Sheet.objects.get(project=project, revision=1)
        _approve(first, list(first.required_roles), people)  # the last one queues the seal
    elif step == "second":
        with transaction.atomic():
            demo_followups(project)
            sheet_generate(
                project=project,
                language="en",
                actor=people.get(GENERATOR),
                acknowledgement=SECOND_REASON,
            )
    else:
        second = Sheet.objects.get(project=project, revision=2)
        roles = [role for role in second.required_roles if role in SECOND_SIGNERS]
        _approve(second, roles, people)


def demo_delete() -> bool:
    """Delete the demo project and everything in it (its stored files once the deletion is
    committed); nothing outside it, not even the demo accounts. False when there is none."""
    project = Project.objects.filter(slug=DEMO_SLUG).first()
    if project is None:
        return False
    with transaction.atomic():
        files = _stored_files(project)
        # Sign-offs, revisions and results are kept from deletion on purpose (PROTECT, append
        # only): here, for the demo alone, they go first, and the project takes the rest.
        SignOff.objects.filter(sheet__project=project).delete()
        Sheet.objects.filter(project=project).delete()
        Result.objects.filter(project=project).delete()
        project.delete()
        transaction.on_commit(lambda: _remove(files))
    return True


def _stored_files(project: Project) -> list[str]:
    names = list(
        Evidence.objects.filter(project=project).exclude(file="").values_list("file", flat=True)
    )
    names += (
        ProbeOutput.objects.filter(run__project=project)
        .exclude(file="")
        .values_list("file", flat=True)
    )
    for pdf, sealed in Sheet.objects.filter(project=project).values_list("pdf", "sealed_pdf"):
        names += [name for name in (pdf, sealed) if name]
    return sorted(set(names))


def _remove(names: list[str]) -> None:
    for name in names:
        try:
            default_storage.delete(name)
        except OSError as exc:
            log.warning("could not remove %s: %s", name, exc)
