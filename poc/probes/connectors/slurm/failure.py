"""The controlled failure: a job asking for more GPUs than any node has, through
slurmrestd or sbatch over SSH, and how its refusal is read."""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from typing import Any

from poc.probes.connectors.slurm.refusals import form_refusal, is_refusal, other_refusal
from poc.probes.connectors.slurm.rest import Rest, discover, job_state, rest_node, version_key
from poc.probes.connectors.slurm.target import ConnectorError, SlurmRestTarget
from poc.probes.connectors.slurm.values import as_int, as_text

SCENARIO = "more_gpus_than_any_node"
_GRES_TYPE = re.compile(r"^[A-Za-z0-9][\w.\-]{0,63}$")
_SUBMITTED = re.compile(r"^(?:Submitted batch job\s+)?(\d+)(?:;\S*)?$")
_TOOL_ERROR = re.compile(r"\b(?:sbatch|srun|salloc): error:\s*(.+)$")
_SUBMIT_REFUSED = re.compile(
    r"error:\s*(?:Batch job submission failed|Unable to allocate resources|"
    r"Job submit/allocate failed):\s*(.+)$"
)


def _result(
    state: str, reason: str | None, job_id: int | None, seconds: float, gpus: int | None = None
) -> dict[str, Any]:
    return {
        "scenario": SCENARIO,
        "gpus_requested": gpus,
        "clean": state == "refused",
        "state": state,
        "reason": reason,
        "job_id": job_id,
        "seconds": round(seconds, 3),
        "cancelled": False,
        "note": "",
        "raw": [],
    }


def _submit_body(
    version: str, gpus: int, partition: str | None, gpu_type: str | None = None
) -> dict[str, Any]:
    script = "#!/bin/sh\ntrue\n"
    job: dict[str, Any] = {
        "name": "workbench-over-quota",
        "current_working_directory": "/tmp",
        "standard_output": "/dev/null",
        "standard_error": "/dev/null",
    }
    asked = f"gpu:{gpu_type}:{gpus}" if gpu_type else f"gpu:{gpus}"
    if version_key(version) <= (0, 0, 38):
        job.update(gres=asked, environment={"PATH": "/bin:/usr/bin"})
    else:  # v0.0.39+ (from Slurm's OpenAPI documentation; not measured here)
        job.update(tres_per_node=f"gres/{asked}", environment=["PATH=/bin:/usr/bin"])
    if partition:
        job["partition"] = partition
    return {"job": job, "script": script}


def oversized_request(
    nodes: list[dict[str, Any]], partition: str | None = None
) -> tuple[int, str | None] | None:
    """(GPUs, GPU type or None) one more than the largest node has; None without GPU nodes.

    The type is named when the largest node's GPUs are all of one type, so that sites which
    refuse an untyped request weigh the count instead of the form.
    """
    candidates = [
        n for n in nodes if n["gpus_total"] and (partition is None or partition in n["partitions"])
    ]
    if not candidates:
        return None
    largest = max(candidates, key=lambda n: n["gpus_total"])
    types = {e["type"] for e in largest["gres"] if e["name"] == "gpu"}
    gpu_type = types.pop() if len(types) == 1 else None
    if gpu_type is not None and not _GRES_TYPE.match(gpu_type):
        gpu_type = None
    return largest["gpus_total"] + 1, gpu_type


def over_quota_rest(
    target: SlurmRestTarget,
    *,
    resolve: Callable[[str, int], str],
    gpus: int | None = None,
    partition: str | None = None,
) -> dict[str, Any]:
    """Submit, through slurmrestd, a job asking for more GPUs than any node has.

    `gpus` defaults to one more than the largest node declares (in `partition` when given).
    A refusal at submit is the expected, clean outcome; a job accepted anyway is read once
    (pending and why), cancelled, and reported with clean False.
    """
    rest = Rest(target, resolve)
    version, _ = discover(rest)
    gpu_type = None
    if gpus is None:
        answer = rest.request("GET", f"/slurm/{version}/nodes")
        reason = rest.failure(answer, f"GET /slurm/{version}/nodes")
        nodes = [] if reason else [rest_node(n) for n in answer.data.get("nodes") or []]
        # Without a GPU node, one GPU is already more than any node has.
        sized = None if reason or not nodes else oversized_request(nodes, partition) or (1, None)
        if sized is None:
            result = _result("error", reason or "no node to size the request from", None, 0.0)
            result["raw"] = rest.raw
            return result
        gpus, gpu_type = sized
    if gpus < 1:
        raise ConnectorError("gpus must be at least 1")
    started = time.monotonic()
    answer = rest.request(
        "POST", f"/slurm/{version}/job/submit", _submit_body(version, gpus, partition, gpu_type)
    )
    seconds = time.monotonic() - started
    data = answer.data if isinstance(answer.data, dict) else {}
    job_id = as_int(data.get("job_id"))
    if answer.status == 200 and job_id is not None:
        result = _accepted_rest(rest, version, job_id, seconds)
    elif answer.status in (401, 403) or not data:
        result = _result("error", rest.failure(answer, "POST job/submit"), None, seconds)
    else:
        errors, codes = answer.errors(), answer.error_codes()
        if form_refusal([errors]):
            reason = "refused for the way the request is written, not for the GPU count: "
            result = _result("error", reason + errors[:400], None, seconds)
        elif other_refusal([errors]):
            reason = "refused for another reason, not for the GPU count: "
            result = _result("error", reason + errors[:400], None, seconds)
        elif any(2000 <= c < 3000 for c in codes) or (not codes and is_refusal(errors)):
            result = _result("refused", errors, None, seconds)
        else:
            result = _result("error", rest.failure(answer, "POST job/submit"), None, seconds)
    result["gpus_requested"] = gpus
    result["raw"] = rest.raw
    return result


def _accepted_rest(rest: Rest, version: str, job_id: int, seconds: float) -> dict[str, Any]:
    look = rest.request("GET", f"/slurm/{version}/job/{job_id}")
    jobs = look.data.get("jobs") if isinstance(look.data, dict) else None
    job = jobs[0] if jobs and isinstance(jobs[0], dict) else {}
    state = "pending" if job_state(job) == "PENDING" else "accepted"
    result = _result(state, as_text(job.get("state_reason")), job_id, seconds)
    cancel = rest.request("DELETE", f"/slurm/{version}/job/{job_id}")
    result["cancelled"] = cancel.status == 200 and not cancel.errors()
    if result["cancelled"]:
        outcome = "it was cancelled"
    elif "already completing or completed" in cancel.errors().lower():
        outcome = "it ended before it could be cancelled"
    else:
        outcome = f"cancelling it FAILED ({cancel.errors() or cancel.status}): cancel it by hand"
    result["note"] = f"the controller accepted job {job_id}; {outcome}"
    return result


def over_quota_command(
    gpus: int, *, partition: str | None = None, gpu_type: str | None = None
) -> str:
    """The sbatch line for the SSH variant: a real submit of `true` asking for `gpus` GPUs
    (of `gpu_type` when given: some sites refuse a GPU request without a type)."""
    if gpus < 1:
        raise ValueError("gpus must be at least 1")
    if gpu_type is not None and not _GRES_TYPE.match(gpu_type):
        raise ValueError("not a GRES type name")
    words = [
        "sbatch",
        "--parsable",
        "--job-name=workbench-over-quota",
        "--chdir=/tmp",
        "--output=/dev/null",
        f"--gres=gpu:{gpu_type}:{int(gpus)}" if gpu_type else f"--gres=gpu:{int(gpus)}",
    ]
    if partition:
        words.append(f"--partition={partition}")
    words.append("--wrap=true")
    return shlex.join(words)


def scancel_command(job_id: int) -> str:
    """The command that cancels a job the SSH variant got accepted."""
    return f"scancel {int(job_id)}"


def parse_over_quota_output(
    exit_code: int, stdout: str, stderr: str, *, seconds: float = 0.0, command: str = "sbatch"
) -> dict[str, Any]:
    """The controlled-failure result from the submit command's exit status and output.

    Refused: sbatch/srun/salloc's "... submission failed: <reason>" (the text a user reads).
    Accepted: a job id ("Submitted batch job 12" or --parsable's "12"); the result then holds
    `cancel_command`, which the caller runs, and clean False.
    """
    lines = [line.strip() for line in (stderr + "\n" + stdout).splitlines() if line.strip()]
    refused = [m.group(1).strip() for line in lines if (m := _SUBMIT_REFUSED.search(line))]
    job_ids = [
        int(m.group(1)) for line in stdout.splitlines() if (m := _SUBMITTED.match(line.strip()))
    ]
    # What the submit command said before its verdict: a site's job_submit plugin explains a
    # refusal there ("You must always specify a type when requesting gpu GRES") and the
    # verdict itself may only say "Unspecified error".
    said = [
        m.group(1).strip()
        for line in lines
        if (m := _TOOL_ERROR.search(line)) and not _SUBMIT_REFUSED.search(line)
    ]
    if refused and form_refusal([*said, refused[-1]]):
        result = _result(
            "error",
            "refused for the way the request is written, not for the GPU count: "
            + "; ".join([*said[-2:], refused[-1]])[:400],
            None,
            seconds,
        )
    elif refused and other_refusal([refused[-1]]):
        result = _result(
            "error",
            "refused for another reason, not for the GPU count: "
            + "; ".join([*said[-2:], refused[-1]])[:400],
            None,
            seconds,
        )
    elif refused and said and not is_refusal(refused[-1]):
        result = _result(
            "error",
            "refused by the site's submit rules, not for the GPU count: "
            + "; ".join([*said[-2:], refused[-1]])[:400],
            None,
            seconds,
        )
    elif refused and is_refusal(refused[-1]):
        result = _result("refused", refused[-1], None, seconds)
    elif exit_code == 0 and job_ids:
        result = _result("accepted", None, job_ids[-1], seconds)
        result["cancel_command"] = scancel_command(job_ids[-1])
        result["note"] = f"the controller accepted job {job_ids[-1]}: cancel it"
    else:
        last = refused[-1] if refused else lines[-1] if lines else "no output"
        result = _result("error", f"exit {exit_code}: {last[:300]}", None, seconds)
    asked = re.search(r"--gres=(?:gres/)?gpu:(?:[^:\s]+:)?(\d+)\b", command)
    result["gpus_requested"] = int(asked.group(1)) if asked else None
    result["raw"] = [{"name": command, "status": exit_code, "text": (stdout + stderr)[:20000]}]
    return result
