"""Cluster documents uploaded in the browser and posted over the API: stored as a probe run of the
candidate (and of its cluster), judged by the checks a live cluster run is judged by, all or
nothing. Inputs are the recorded captures of shared/fixtures/k8s/ and shared/fixtures/slurm/."""

import html
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from poc.models import ResultCell
from poc.probes.models import Cluster, ProbeOutput, ProbeRun
from tests.factories import CandidateFactory
from tests.fakes.k8s_api import FIXTURES
from tests.poc.api_helpers import token_client
from tests.probes.helpers import apply_gpu_templates
from tests.probes.test_slurm import DOCUMENTED_NODES
from tests.probes.test_slurm import FIXTURES as SLURM

pytestmark = pytest.mark.django_db
SCHEDULERS = FIXTURES / "schedulers"
UPLOAD = "/projects/alpha/probes/documents/"
API = "/api/v1/projects/alpha/probes/documents/"


@pytest.fixture
def bare(personas: dict[str, Any]) -> dict[str, Any]:
    """Candidate volcano of project alpha with a registered Kubernetes cluster it cannot reach."""
    k8s = Cluster.objects.create(
        project=personas["alpha"],
        candidate=personas["volcano"],
        name="air-gapped",
        kind="kubernetes",
        api_url="https://10.0.0.5:6443",
        expected_gpus_per_node=2,
    )
    return {**personas, "k8s": k8s}


@pytest.fixture
def suite(bare: dict[str, Any]) -> dict[str, Any]:
    """The same, with the GPU node and cluster evidence actions bound to checks."""
    from evaluations.models import TemplateSet
    from evaluations.services import template_set_apply

    apply_gpu_templates(bare["alpha"])  # seeds the catalogue too
    template_set_apply(
        project=bare["alpha"],
        template_set=TemplateSet.objects.get(key="cluster-probe-evidence"),
        actor=None,
    )
    return bare


def upload(path: Path, name: str = "") -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


def cells(candidate: Any) -> dict[str, str]:
    rows = ResultCell.objects.filter(candidate=candidate).values_list("action__key", "outcome")
    return dict(rows)


def stored_files(settings: Any) -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_documents_uploaded_for_a_cluster_are_judged_like_a_live_run(suite, login) -> None:
    client = login(suite["bob"])
    probes_page = client.get("/projects/alpha/probes/").content.decode()
    assert 'href="/projects/alpha/probes/documents/"' in probes_page
    page = html.unescape(client.get(UPLOAD).content.decode())
    assert 'action="/projects/alpha/probes/documents/"' in page and "air-gapped" in page
    assert "kubectl get nodes -o yaml > nodes.yaml" in page and 'sinfo -N -h -O "NodeList:|' in page
    response = client.post(
        UPLOAD,
        {
            "candidate": "volcano",
            "cluster": str(suite["k8s"].pk),
            "documents": [
                upload(FIXTURES / "node-2x-tesla-t4.yaml"),
                upload(SCHEDULERS / "kai-limited-queue-gpu-quota1-limit1.yaml"),
                upload(SCHEDULERS / "pod-failedscheduling-insufficient-gpu-event.txt"),
            ],
        },
    )
    run = ProbeRun.objects.get()
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert response["Location"] == f"/projects/alpha/probes/{run.pk}/"
    assert (run.source, run.cluster, run.status) == ("documents", suite["k8s"], "done")
    assert (run.node_count, run.gpu_count, run.created_by) == (1, 2, suite["bob"])
    assert run.with_failures is True
    assert [q["name"] for q in run.cluster_facts["kai"]["queues"]] == ["default", "test"]
    assert "raw" not in run.cluster_facts and "gpu_nodes" not in run.cluster_facts
    (node,) = run.nodes.all()
    assert node.facts["expected_gpu_count"] == 2 and node.verdict == "healthy"
    outputs = ProbeOutput.objects.filter(run=run)
    assert [o.name for o in outputs] == [
        "node-2x-tesla-t4.yaml",
        "kai-limited-queue-gpu-quota1-limit1.yaml",
        "pod-failedscheduling-insufficient-gpu-event.txt",
    ]
    assert all(o.node_id is None and o.sha256 for o in outputs)
    outcomes = cells(suite["volcano"])
    assert outcomes["cluster-probe-more-gpus-than-any-node"] == "passed"
    assert outcomes["cluster-probe-over-quota"] == "not_covered"  # no quota refusal given
    assert outcomes["cluster-probe-gpu-operator"] == "not_covered"  # no ClusterPolicy given
    assert outcomes["gpu-probe-count"] == "failed"  # two T4s where the template asks for eight
    page = client.get(response["Location"]).content.decode()
    for shown in (
        "Cluster documents uploaded",
        "What the cluster said",
        "NVIDIA KAI Scheduler",
        "Documents read",
        "kubectl describe pod",
        "0/6 nodes are available: 6 Insufficient nvidia.com/gpu.",
        "qa-mig-worker-gpu-1",
        "Tesla-T4",
    ):
        assert shown in page, shown
    assert f"/projects/alpha/probes/outputs/{outputs[0].pk}/" in page


def test_pasted_slurm_output_needs_no_cluster(suite, login) -> None:
    client = login(suite["bob"])
    text = (SLURM / "sbatch-gres-rejected-requested-node-config.txt").read_text()
    response = client.post(UPLOAD, {"candidate": "volcano", "text": DOCUMENTED_NODES})
    assert response.status_code == 302
    run = ProbeRun.objects.get()
    assert (run.cluster, run.node_count, run.gpu_count) == (None, 2, 8)
    assert ProbeOutput.objects.get(run=run).name == "pasted documents"
    response = client.post(UPLOAD, {"candidate": "volcano", "text": text})
    assert response.status_code == 302
    assert cells(suite["volcano"])["cluster-probe-more-gpus-than-any-node"] == "passed"


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        (
            lambda s: {
                "documents": [
                    upload(FIXTURES / "node-2x-tesla-t4.yaml"),
                    upload(SCHEDULERS / "podgroup-unschedulable-describe.txt"),
                ]
            },
            422,
            "podgroup-unschedulable-describe.txt: kubectl describe output of a PodGroup",
        ),
        (
            lambda s: {"cluster": str(s["k8s"].pk), "text": DOCUMENTED_NODES},
            422,
            "documents of a Slurm cluster cannot be attached to it",
        ),
        (lambda s: {"text": "just some notes"}, 422, "not recognised"),
        (lambda s: {}, 422, "Choose files or paste the documents."),
    ],
    ids=["one-bad-file", "wrong-kind-of-cluster", "prose", "nothing"],
)
def test_a_bad_upload_keeps_the_form_and_stores_nothing(
    bare, login, settings, data, status, message
) -> None:
    response = login(bare["bob"]).post(UPLOAD, {"candidate": "volcano", **data(bare)})
    assert response.status_code == status
    page = response.content.decode()
    assert message in page.replace("&#x27;", "'")
    assert not ProbeRun.objects.exists() and not ProbeOutput.objects.exists()
    assert stored_files(settings) == []


def test_an_upload_over_the_limit_is_refused_unread(bare, login, settings) -> None:
    settings.API_MAX_BODY_BYTES = 1024 * 1024
    big = SimpleUploadedFile("nodes.yaml", b"kind: List\nitems: []\n" + b"#" * (3 << 20))
    response = login(bare["bob"]).post(UPLOAD, {"candidate": "volcano", "documents": [big]})
    assert response.status_code == 413 and "1 MB" in response.content.decode()
    assert not ProbeRun.objects.exists() and stored_files(settings) == []


def test_another_candidates_cluster_is_refused(bare, login) -> None:
    kai = CandidateFactory(project=bare["alpha"], solution_key="slurm")
    other = Cluster.objects.create(
        project=bare["alpha"], candidate=kai, name="theirs", kind="kubernetes"
    )
    data = {"candidate": "volcano", "cluster": str(other.pk), "text": "kind: List\nitems: []\n"}
    response = login(bare["bob"]).post(UPLOAD, data)
    assert response.status_code == 422
    assert "is not one of this candidate" in response.content.decode().replace("&#x27;", "'")
    assert not ProbeRun.objects.exists()


def test_observers_read_the_page_and_cannot_upload_strangers_get_404(bare, login) -> None:
    text = (FIXTURES / "node-2x-tesla-t4.yaml").read_text()
    observer = login(bare["dave"])
    page = observer.get(UPLOAD)
    assert page.status_code == 200 and 'action="/projects/alpha/probes/documents/"' not in (
        page.content.decode()
    )
    assert observer.post(UPLOAD, {"candidate": "volcano", "text": text}).status_code == 403
    stranger = login(bare["charlie"])
    assert stranger.get(UPLOAD).status_code == 404
    assert stranger.post(UPLOAD, {"candidate": "volcano", "text": text}).status_code == 404
    assert not ProbeRun.objects.exists()


# --- the API --------------------------------------------------------------------------------


def test_a_pipeline_posts_documents_with_a_probes_write_token(suite) -> None:
    client, token, _raw = token_client(suite["alpha"], scopes=("probes:write",))
    body = (FIXTURES / "node-2x-tesla-t4.yaml").read_bytes()
    query = f"?candidate=volcano&cluster={suite['k8s'].pk}&name=nodes.yaml"
    response = client.post(API + query, body, content_type="application/yaml")
    assert response.status_code == 201, response.content
    run = ProbeRun.objects.get()
    assert (
        response.json()["run"]["id"] == run.pk and response.json()["run"]["source"] == "documents"
    )
    assert response.json()["results"]["stored"] > 0
    assert (run.token, run.cluster, run.gpu_count) == (token, suite["k8s"], 2)
    assert ProbeOutput.objects.get(run=run).name == "nodes.yaml"
    envelope = {
        "documents": [
            {"name": "scontrol.txt", "text": DOCUMENTED_NODES},
            {
                "name": "sbatch.txt",
                "text": (SLURM / "sbatch-gres-rejected-requested-node-config.txt").read_text(),
            },
        ]
    }
    response = client.post(
        API + "?candidate=volcano", json.dumps(envelope), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    slurm_run = ProbeRun.objects.get(pk=response.json()["run"]["id"])
    assert slurm_run.cluster_facts["format"] == "workbench-slurm-facts/1"
    assert slurm_run.cluster_facts["controlled_failures"]["scenarios"][0]["clean"] is True
    detail = client.get(f"/api/v1/probes/{slurm_run.pk}/")
    assert detail.status_code == 403  # the token may write probes, not read them


def test_the_api_refuses_without_the_scope_and_names_a_bad_document(bare) -> None:
    suite = bare
    body = (FIXTURES / "node-2x-tesla-t4.yaml").read_bytes()
    for scopes in (("read",), ("read", "results:write")):
        client, _token, _raw = token_client(suite["alpha"], scopes=scopes)
        response = client.post(API + "?candidate=volcano", body, content_type="application/yaml")
        assert response.status_code == 403 and "probes:write" in response.json()["detail"]
    client, _token, _raw = token_client(suite["alpha"], scopes=("probes:write",))
    bad = (SCHEDULERS / "queue-gpu-capability-describe.txt").read_bytes()
    response = client.post(
        API + "?candidate=volcano&name=queue.txt", bad, content_type="text/plain"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("queue.txt: kubectl describe output of a Queue")
    response = client.post(API, body, content_type="application/yaml")
    assert response.status_code == 400 and "candidate" in response.json()["detail"]
    response = client.post(
        API + "?candidate=volcano&cluster=99999", body, content_type="application/yaml"
    )
    assert response.status_code == 404
    assert not ProbeRun.objects.exists() and not ProbeOutput.objects.exists()


def test_the_endpoint_is_in_the_schema() -> None:
    from rest_framework.test import APIClient

    schema = APIClient().get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/projects/{slug}/probes/documents/"]["post"]
    assert set(operation["requestBody"]["content"]) == {
        "application/json",
        "application/yaml",
        "text/plain",
    }
    assert {p["name"] for p in operation["parameters"]} >= {"candidate", "cluster", "name"}
