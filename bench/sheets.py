"""A procurement sheet: generate, render and seal time, peak memory, pages per second, and
the ratio against WeasyPrint rendering the same HTML file alone.

The project has ten CI runs of history, each result with an evidence link, outcomes drawn
evenly (about three results in four are exceptions). The sheet is the decision document with
the complete record attached. Targets (the sheet issue's): 5 candidates x 200 actions in 3 s
or less (the default), `bench/sheets.py 10 300` in 5 s, `bench/sheets.py 10 1000` in 10 s;
the sheet's own work (everything but WeasyPrint's layout) 3 s or less at 10 x 1,000; peak
memory at most 300 MB above the process's level before the first sheet. Run with `make bench`
or `.venv/bin/python bench/sheets.py [CANDIDATES ACTIONS]` (PostgreSQL from DATABASE_URL, a
throwaway database); BENCH_PROFILE=1 prints a profile of the rendering.

"Alone" is WeasyPrint with its default options turning the sheet's HTML file into a PDF in a
process of its own, timed inside that process (interpreter start and imports excluded), which
is what `weasyprint sheet.html sheet.pdf` does.
"""

import gc
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _setup import bulk_actions, django_on_throwaway_database

# Sizes from the command line: `bench/sheets.py 10 300`; ten CI runs of history by default.
CANDIDATES, ACTIONS = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (5, 200)
HISTORY = 10
REPEAT = 3 if CANDIDATES * ACTIONS <= 1000 else 1
# (seconds, peak MB) the sheet issue asks for at each size; other sizes are held to the largest.
# The decision document's targets (the sheet issue): seconds for generate + render + seal, and
# what the process may hold above its level before the first sheet; the sheet's own work
# (snapshot, attachments, seal: everything but WeasyPrint) 3 s or less at 10 x 1,000.
TARGETS = {(5, 200): 3.0, (10, 300): 5.0, (10, 1000): 10.0}
TARGET_S = TARGETS.get((CANDIDATES, ACTIONS), 10.0)
TARGET_ABOVE_MB = 300
TARGET_OWN_S = 3.0

ALONE = """
import json, re, sys, time
from weasyprint import HTML
start = time.perf_counter()
HTML(filename=sys.argv[1]).write_pdf(sys.argv[1] + ".pdf")
seconds = time.perf_counter() - start
# VmHWM, not ru_maxrss: the latter carries the parent's peak across fork and exec.
hwm = re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)
print(json.dumps({"seconds": seconds, "peak_mb": int(hwm) / 1024}))
"""


def weasyprint_alone(html: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sheet.html"
        path.write_text(html, encoding="utf-8")
        out = subprocess.run(
            [sys.executable, "-c", ALONE, str(path)], check=True, capture_output=True, text=True
        )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def build(candidates: int = CANDIDATES, actions: int = ACTIONS, history: int = 1):  # type: ignore[no-untyped-def]
    """A project of `candidates` x `actions` with `history` CI runs of results, every result
    with an evidence link; each cell points at the last run's result."""
    from django.contrib.auth import get_user_model

    from evaluations.models import Candidate, Project, Solution
    from poc.models import (
        Evidence,
        Outcome,
        Result,
        ResultCell,
    )

    user = get_user_model().objects.create(username="bench")
    project = Project.objects.create(name="Sheet bench · 选型评估", slug="sheet-bench")
    solutions = list(Solution.objects.filter(kind="product"))
    cands = Candidate.objects.bulk_create(
        Candidate(
            project=project,
            solution=solutions[i % len(solutions)],
            slug=f"c{i}",
            reason="bench",
            position=i,
        )
        for i in range(candidates)
    )
    acts = bulk_actions(
        project, actions, feature="需求 {}", question="动作 {} 在资源不足时是否给出清楚的反馈？"
    )
    rng = random.Random(7)
    last: list[Result] = []
    for run in range(history):
        results = []
        for c in cands:
            for a in acts:
                outcome = rng.choice(Outcome.values)
                results.append(
                    Result(
                        project=project,
                        candidate=c,
                        action=a,
                        outcome=outcome,
                        run_reference=f"nightly-{run}",
                        failure_cause="作业在第 40 步卡住" if outcome == "failed" else "",
                        integration_what="LDAP" if outcome == "needs_integration" else "",
                        integration_owner_team="ops" if outcome == "needs_integration" else "",
                        integration_effort_days=2 if outcome == "needs_integration" else None,
                    )
                )
        Result.objects.bulk_create(results, batch_size=2000)
        Evidence.objects.bulk_create(
            (
                Evidence(
                    project=project,
                    result=r,
                    kind="link",
                    url=f"https://ci.example.com/runs/{run}/{r.candidate.slug}/{r.action.key}",
                    name=f"CI log {run}",
                )
                for r in results
            ),
            batch_size=2000,
        )
        last = results
    ResultCell.objects.bulk_create(
        (
            ResultCell(
                project=project,
                candidate=r.candidate,
                action=r.action,
                result=r,
                outcome=r.outcome,
                result_count=history,
                evidence_count=1,
            )
            for r in last
        ),
        batch_size=2000,
    )
    return project, user


def _peak_mb() -> float:
    """This process's peak resident memory (VmHWM) in MB."""
    hwm = re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text())
    assert hwm is not None
    return int(hwm.group(1)) / 1024


def main() -> None:
    teardown = django_on_throwaway_database()
    try:
        from django.conf import settings
        from django.core.management import call_command

        from reports import rendering, services
        from reports.models import Decision, Sheet, SheetStatus, SignOff
        from reports.signing import create_self_signed_p12

        settings.MEDIA_ROOT = tempfile.mkdtemp()
        settings.SHEET_SIGNING_P12 = f"{settings.MEDIA_ROOT}/bench.p12"
        settings.SHEET_SIGNING_PASSPHRASE = "bench"
        create_self_signed_p12(__import__("pathlib").Path(settings.SHEET_SIGNING_P12), "bench")
        call_command("seed_catalog", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        project, user = build(CANDIDATES, ACTIONS, history=HISTORY)
        # Peak memory is the sheets' work, not building the benchmark's data: the data's
        # objects are freed and the peak-RSS mark of this process is reset (Linux clear_refs).
        gc.collect()
        from workbench.memory import release_free_memory

        release_free_memory()
        Path("/proc/self/clear_refs").write_text("5")
        # A worker loads WeasyPrint (and Pango) once, with its first sheet; timed here as a
        # worker that has rendered before (the import took 1-1.5 s on this machine).
        import weasyprint  # noqa: F401

        # WeasyPrint's layout, timed wherever it runs: sealing lays out the sign-off page, which
        # is WeasyPrint's work, not the sheet's own.
        layout_s: list[float] = []
        lay_out = rendering.html_to_pdf

        def timed_layout(*args, **kwargs):  # type: ignore[no-untyped-def]
            began = time.perf_counter()
            try:
                return lay_out(*args, **kwargs)
            finally:
                layout_s.append(time.perf_counter() - began)

        rendering.html_to_pdf = timed_layout  # type: ignore[assignment]
        start_mb = _peak_mb()  # the mark just reset: what the process holds before any sheet
        ours, alone, alone_peak, pages, peak_generate = [], [], 0.0, 0, 0.0
        phases: dict[str, list[float]] = {"generate": [], "render": [], "seal": []}
        seal_layout: list[float] = []
        for _ in range(REPEAT):
            start = time.perf_counter()
            sheet = services.sheet_generate(
                acknowledgement="known gaps", project=project, language="zh-hans", actor=None
            )
            generated = time.perf_counter()
            peak_generate = peak_generate or _peak_mb()
            if os.environ.get("BENCH_PROFILE"):
                import cProfile
                import pstats

                profile = cProfile.Profile()
                sheet = profile.runcall(services.sheet_render, sheet_id=sheet.pk)
                pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
            else:
                sheet = services.sheet_render(sheet_id=sheet.pk)
            rendered = time.perf_counter()
            assert sheet is not None and sheet.status == SheetStatus.READY, sheet and sheet.error
            for role in sheet.required_roles:
                SignOff.objects.create(
                    sheet=sheet,
                    role=role,
                    user=user,
                    decision=Decision.APPROVE,
                    sheet_sha256=sheet.sha256,
                )
            Sheet.objects.filter(pk=sheet.pk).update(status=SheetStatus.SEALING)  # all approved
            sealing = time.perf_counter()
            layout_s.clear()
            sheet = services.sheet_seal(sheet_id=sheet.pk)
            assert sheet is not None and sheet.status == SheetStatus.SEALED
            end = time.perf_counter()
            ours.append(end - start)
            phases["generate"].append(generated - start)
            phases["render"].append(rendered - generated)
            phases["seal"].append(end - sealing)
            seal_layout.append(sum(layout_s))
            pages = sheet.page_count
            if os.environ.get("BENCH_PDF"):  # keep the sealed file to look at
                Path(os.environ["BENCH_PDF"]).write_bytes(sheet.sealed_pdf.read())
            measured = weasyprint_alone(rendering.sheet_html(Sheet.objects.get(pk=sheet.pk)))
            alone.append(measured["seconds"])
            alone_peak = max(alone_peak, measured["peak_mb"])
        peak_mb = _peak_mb()
        # The record's part, timed alone on the last revision: made from the snapshot, and
        # embedded into the laid-out draft.
        from reports import attachments

        last = Sheet.objects.select_related("project").get(pk=sheet.pk)
        start = time.perf_counter()
        files = attachments.sheet_attachments(last)
        made = time.perf_counter()
        with last.pdf.open("rb") as handle:
            attachments.embed(handle.read(), files, last.created_at)
        embedded = time.perf_counter()
        record_s = (made - start, embedded - made)
        ours_s, alone_s = statistics.median(ours), statistics.median(alone)
        print(f"sheet: {CANDIDATES} candidates x {ACTIONS} actions, {pages} pages (zh-hans)")
        print(
            f"generate + render + seal (ours): {ours_s:.2f} s median of {REPEAT} "
            f"(target <= {TARGET_S:.0f} s): {'OK' if ours_s <= TARGET_S else 'OVER'}"
        )
        print(
            "  of which                       "
            + ", ".join(f"{k} {statistics.median(v):.2f} s" for k, v in phases.items())
        )
        own = (
            statistics.median(phases["generate"])
            + record_s[0]
            + record_s[1]
            + statistics.median(phases["seal"])
            - statistics.median(seal_layout)
        )
        print(
            f"  the record: made {record_s[0]:.2f} s, embedded {record_s[1]:.2f} s "
            f"({sum(f.size for f in files) / 1e6:.1f} MB in {len(files)} files)"
        )
        print(
            f"  sealing: {statistics.median(phases['seal']):.2f} s, of which WeasyPrint laying "
            f"out the sign-off page {statistics.median(seal_layout):.2f} s"
        )
        print(
            f"the sheet's own work:            {own:.2f} s (generate, record, seal; target <= "
            f"{TARGET_OWN_S:.0f} s at 10 x 1,000): {'OK' if own <= TARGET_OWN_S else 'OVER'}"
        )
        print(f"WeasyPrint alone, same HTML:     {alone_s:.2f} s, peak {alone_peak:.0f} MB")
        print(f"pages per second (ours):         {pages / ours_s:.1f}")
        # The whole job (snapshot, record, seal included) against WeasyPrint's layout alone.
        print(f"ratio ours / alone:              {ours_s / alone_s:.2f}")
        above = peak_mb - start_mb
        print(
            f"peak memory (RSS from generate): {peak_mb:.0f} MB, {above:.0f} MB above the level "
            f"before (target <= {TARGET_ABOVE_MB} MB above): "
            f"{'OK' if above <= TARGET_ABOVE_MB else 'OVER'}"
        )
        print(f"  held before the first sheet:   {start_mb:.0f} MB (Django, the benchmark's data)")
        print(f"  peak once generated:           {peak_generate:.0f} MB")
        limit = settings.SHEET_PARTS_ABOVE
        parts = last.layout == "full" and 0 < limit < rendering.sheet_rows(sheet)
        print(f"laid out:                        {'in parts' if parts else 'one document'}")
    finally:
        teardown()


if __name__ == "__main__":
    main()
