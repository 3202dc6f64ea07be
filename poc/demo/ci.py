"""The demo project's CI history: five nightly runs of two acceptance pipelines, posted through
the services behind the REST API (JSON results) and the JUnit upload, so the CI runs page has
trends to show: pass rates that climb as the PoC teams fix things, an action that flips from run
to run, and in the newest run a regression and recoveries."""

from dataclasses import dataclass

from django.contrib.auth.models import User

from evaluations.models import ApiToken, Project, TokenScope
from evaluations.services import api_token_create
from poc.models import Outcome, Run
from poc.services.ingest import RunData, junit_ingest, results_ingest, validate_rows
from workbench.typing import JSON

K, V, S, R = "k8s-gpu-operator", "volcano", "slurm", "runai"
RUNS = (101, 102, 103, 104, 105)
FIRST_RUN = "k8s-acceptance-101"  # its presence says the demo's history was written
COMMITS = ("3f9c2e1", "8a41d07", "c2b7e95", "51e0f3a", "e9d4a6c")
CI_URL = "https://ci.example.com/gpu-pool"
# The actions the pipelines automate.
CI_ACTIONS = (
    "tenancy-cross-project-read",
    "cf-over-quota-job",
    "cf-gpu-shape-mismatch",
    "cf-node-isolation",
    "cf-node-job-retry",
    "cf-node-alert",
    "cf-priority-order",
    "cf-preemption-record",
    "cf-preempted-job-resume",
    "cf-foreign-project-submit",
    "cf-foreign-logs-artifacts",
    "cf-privilege-escalation",
    "cf-failed-job-trace",
    "cf-gpu-memory-anomaly",
    "cf-telemetry-outage",
    "cf-failed-upgrade-rollback",
    "cf-driver-rollback",
    "cf-jobs-during-upgrade",
)
OUTCOMES = {"P": Outcome.PASSED, "F": Outcome.FAILED, "N": Outcome.NOT_COVERED}


@dataclass(frozen=True)
class History:
    """An action's outcome in each of the five runs (P, F or N), and why it failed or was not
    covered."""

    runs: str
    why: str


# Actions whose history is not five passes, by candidate.
HISTORIES: dict[str, dict[str, History]] = {
    K: {
        "cf-priority-order": History("FFFFF", "The default scheduler let the low-priority job "
                                     "keep its GPUs: no queue orders waiting jobs."),
        "cf-preemption-record": History("FFFFF", "Nothing was preempted, so nothing recorded it."),
        "cf-preempted-job-resume": History("FFFFF", "Without a queue layer no job is preempted "
                                           "to resume."),
        "cf-node-alert": History("FFPPP", "No alert for the NotReady GPU node within 10 "
                                 "minutes."),
        "cf-telemetry-outage": History("FFFFP", "Stopping the DCGM exporter left a gap in the "
                                       "dashboard and raised no alert."),
        "cf-failed-job-trace": History("FPPPP", "The job's events had expired before the trace "
                                       "step read them (1 h retention)."),
    },
    V: {
        "cf-preempted-job-resume": History("PFPFP", "The resumed job started again from step 0 "
                                           "instead of its last checkpoint."),
        "cf-node-alert": History("PPPPF", "The NotReady alert did not fire: its rule was lost "
                                 "when the monitoring stack was upgraded."),
        "cf-failed-upgrade-rollback": History("FFPPP", "The rollback left the new admission "
                                              "webhook registered; new jobs were refused."),
        "cf-gpu-shape-mismatch": History("FPPPP", "The job waited without a reason naming the "
                                         "GPU model no node has."),
    },
    S: {
        "cf-node-job-retry": History("FFFFP", "The job ended NODE_FAIL and was not requeued "
                                     "(JobRequeue=0)."),
        "cf-foreign-logs-artifacts": History("FFFFF", "Job output files are readable by every "
                                             "user of the shared file system."),
        "cf-jobs-during-upgrade": History("PPPPF", "Restarting slurmctld during the upgrade "
                                          "cancelled two queued jobs."),
        "tenancy-cross-project-read": History("FFPPP", "`squeue` listed other accounts' jobs: "
                                              "PrivateData was not set."),
    },
    R: {
        "cf-driver-rollback": History("NNNNN", "The vendor manages the driver on its nodes: a "
                                      "rollback is not ours to run."),
        "cf-failed-upgrade-rollback": History("FFPPP", "Rolling back the cluster components "
                                              "needed the vendor's support engineer."),
        "cf-telemetry-outage": History("FPPPP", "No alert when the metrics collector stopped."),
    },
}  # fmt: skip
STEADY = History("PPPPP", "")


def _outcome(candidate: str, action: str, run: int) -> tuple[str, str]:
    history = HISTORIES.get(candidate, {}).get(action, STEADY)
    return OUTCOMES[history.runs[run]], history.why


def _rows(candidate: str, run: int) -> list[JSON]:
    """What the Kubernetes pipeline posts for one candidate: a row per action, the failed
    ones with their cause and the job's log."""
    rows: list[JSON] = []
    for action in CI_ACTIONS:
        outcome, why = _outcome(candidate, action, run)
        row: dict[str, JSON] = {"candidate": candidate, "action": action, "outcome": outcome}
        if outcome == Outcome.FAILED:
            row["failure_cause"] = why
            row["evidence_urls"] = [
                f"{CI_URL}/k8s-acceptance/{RUNS[run]}/artifacts/{candidate}/{action}.log"
            ]
        elif outcome == Outcome.NOT_COVERED:
            row["note"] = why
        rows.append(row)
    return rows


def _junit(run: int) -> bytes:
    """The Slurm pipeline's pytest report: one testcase per action, named by its key."""
    cases = []
    for action in CI_ACTIONS:
        outcome, why = _outcome(S, action, run)
        body = ""
        if outcome == Outcome.FAILED:
            body = f'<failure message="{why.replace(chr(34), "")}"/>'
        elif outcome == Outcome.NOT_COVERED:
            body = f'<skipped message="{why.replace(chr(34), "")}"/>'
        cases.append(
            f'<testcase classname="acceptance.test_slurm" name="{action}" time="4.2">'
            f"{body}</testcase>"
        )
    failures = sum("<failure" in case for case in cases)
    return (
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="slurm-acceptance" '
        f'tests="{len(cases)}" failures="{failures}">'
        + "".join(cases)
        + "</testsuite></testsuites>"
    ).encode()


def ci_history(project: Project, people: dict[str, User]) -> int:
    """Post the five nightly runs of both pipelines (a run already posted is skipped); how
    many posts were stored."""
    token = _token(project, people.get("platform"))
    posted = set(
        Run.objects.filter(project=project, external_id__contains="-acceptance-").values_list(
            "external_id", flat=True
        )
    )
    candidates = set(project.candidates.values_list("slug", flat=True))
    stored = 0
    for index, number in enumerate(RUNS):
        external_id = f"k8s-acceptance-{number}"
        if external_id not in posted:
            for candidate in (K, V, R):
                if candidate not in candidates:
                    continue
                run = RunData(
                    external_id=external_id,
                    name=f"Kubernetes acceptance, nightly #{number}",
                    url=f"{CI_URL}/k8s-acceptance/{number}",
                    commit=COMMITS[index],
                )
                rows = validate_rows(project, _rows(candidate, index))
                results_ingest(project=project, run=run, rows=rows, token=token, user=None)
                stored += 1
        external_id = f"slurm-acceptance-{number}"
        if external_id not in posted and S in candidates:
            junit_ingest(
                project=project,
                candidate=S,
                external_id=external_id,
                report=_junit(index),
                token=token,
                user=None,
            )
            stored += 1
    return stored


def _token(project: Project, actor: User | None) -> ApiToken:
    """The pipelines' token, made once (its secret is never shown: the demo posts directly)."""
    name = "Nightly acceptance pipelines"
    token = ApiToken.objects.filter(project=project, name=name).first()
    if token is None:
        token, _secret = api_token_create(
            project=project,
            name=name,
            scopes=[TokenScope.RESULTS_WRITE, TokenScope.READ],
            actor=actor,
            expires_days=None,
        )
    return token
