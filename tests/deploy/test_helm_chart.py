"""The Helm chart (deploy/helm/workbench), rendered by the real helm and checked object by object
against the Kubernetes schemas of the version the chart declares, offline (kubernetes-validate
bundles them). Then the chart is held to the app: every variable the compose file gives the app
reaches each pod, the probes are routes the app serves, migrations run once in a hook that
finds what it reads, the workers consume each queue the settings declare exactly once, beat runs
once, every pod is locked down and fenced by a NetworkPolicy.

helm is fetched to var/tools/bin/helm by `make helm` (a prerequisite of `make test`); without
it these tests fail rather than skip. HELM=/path/to/helm runs them with another binary."""

import base64
import functools
import os
import posixpath
import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml
from django.test import Client
from django.urls import resolve
from kubernetes_validate.utils import latest_version

from workbench import views

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "workbench"
HELM = Path(os.environ.get("HELM") or ROOT / "var" / "tools" / "bin" / "helm")
CHART_YAML = yaml.safe_load((CHART / "Chart.yaml").read_text())
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
RELEASE = "wb"
NAMESPACE = "workbench"

# Values files of the chart's ci/ folder: what an install needs (placeholders), the operator's
# own Secrets and claim, an ingress with TLS plus autoscaling, queues merged into two workers
# with narrowed network policies and extra variables, and chart 0.1's single worker.
SCENARIOS = {
    "default": "default-values.yaml",
    "existing-secret": "existing-secret-values.yaml",
    "ingress-autoscaling": "ingress-autoscaling-values.yaml",
    "workers-network": "workers-network-values.yaml",
    "legacy-worker": "legacy-worker-values.yaml",
}
WORKER_LABEL = "workbench/worker"
HOOK = "helm.sh/hook"
HOOK_WEIGHT = "helm.sh/hook-weight"

Doc = dict[str, Any]


def declared_minimum() -> str:
    """The oldest Kubernetes the chart declares it runs on (kubeVersion: ">=X.Y.Z-0")."""
    match = re.fullmatch(r">=\s*v?(\d+\.\d+\.\d+)(-0)?", CHART_YAML["kubeVersion"].strip())
    assert match, f"kubeVersion {CHART_YAML['kubeVersion']!r} is not a plain lower bound"
    return match.group(1)


KUBE_VERSIONS = (declared_minimum(), latest_version())


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    if not (HELM.is_file() and os.access(HELM, os.X_OK)):
        pytest.fail(
            f"helm is not at {HELM}: `make helm` fetches it (`make test` does it first)",
            pytrace=False,
        )
    return subprocess.run(
        [str(HELM), *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def values_args(scenario: str) -> list[str]:
    return ["-f", str(CHART / "ci" / SCENARIOS[scenario])]


@functools.cache
def render(scenario: str, *sets: str, kube_version: str = KUBE_VERSIONS[0]) -> tuple[Doc, ...]:
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    args += ["--kube-version", kube_version, *values_args(scenario)]
    for item in sets:
        args += ["--set", item]
    result = helm(*args)
    assert result.returncode == 0, result.stderr
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)


def objects(docs: tuple[Doc, ...], kind: str) -> list[Doc]:
    return [doc for doc in docs if doc["kind"] == kind]


def named(docs: tuple[Doc, ...], kind: str, name: str) -> Doc | None:
    found = [doc for doc in objects(docs, kind) if doc["metadata"]["name"] == name]
    assert len(found) <= 1, f"two {kind}s named {name}"
    return found[0] if found else None


def component_of(doc: Doc) -> str:
    return doc["metadata"]["labels"].get("app.kubernetes.io/component", "")


def workload(docs: tuple[Doc, ...], component: str) -> Doc:
    kind = "Job" if component == "migrations" else "Deployment"
    found = [doc for doc in objects(docs, kind) if component_of(doc) == component]
    assert len(found) == 1, f"{len(found)} {kind}s for {component}"
    return found[0]


def workers(docs: tuple[Doc, ...]) -> list[Doc]:
    """The worker Deployments (one per entry of `workers`, or chart 0.1's single one)."""
    found = [doc for doc in objects(docs, "Deployment") if component_of(doc) == "worker"]
    assert found, "no worker Deployment"
    return found


def pods(docs: tuple[Doc, ...], *, job: bool = True) -> dict[str, Doc]:
    """Every workbench workload by a readable name: web, each worker, beat (and the Job)."""
    found = {"web": workload(docs, "web")}
    found.update({doc["metadata"]["name"]: doc for doc in workers(docs)})
    found["beat"] = workload(docs, "beat")
    if job:
        found["migrations"] = workload(docs, "migrations")
    return found


def values_of(scenario: str) -> dict[str, Any]:
    """The chart's values.yaml with the scenario's file laid over it, as helm merges them."""

    def merge(base: Any, over: Any) -> Any:
        if isinstance(base, dict) and isinstance(over, dict):
            return {**base, **{k: merge(base.get(k), v) for k, v in over.items()}}
        return over

    defaults = yaml.safe_load((CHART / "values.yaml").read_text())
    return merge(defaults, yaml.safe_load((CHART / "ci" / SCENARIOS[scenario]).read_text()))


def worker_queues(doc: Doc) -> list[str]:
    (queues,) = [w for w in command_line(doc) if w.startswith("--queues=")]
    return queues.removeprefix("--queues=").split(",")


def settings_queues() -> set[str]:
    from django.conf import settings

    return {queue.name for queue in settings.CELERY_TASK_QUEUES}


def pod_spec(doc: Doc) -> Doc:
    return doc["spec"]["template"]["spec"]


def container(doc: Doc) -> Doc:
    (only,) = pod_spec(doc)["containers"]
    return only


def command_line(doc: Doc) -> list[str]:
    c = container(doc)
    return [*c.get("command", []), *c.get("args", [])]


def is_hook(doc: Doc) -> bool:
    return HOOK in doc["metadata"].get("annotations", {})


def hook_events(doc: Doc) -> set[str]:
    return set(doc["metadata"].get("annotations", {}).get(HOOK, "").split(","))


def hook_weight(doc: Doc) -> int:
    return int(doc["metadata"]["annotations"].get(HOOK_WEIGHT, "0"))


def environment(docs: tuple[Doc, ...], doc: Doc) -> dict[str, Any]:
    """NAME -> its source, for every variable the container gets: a plain value, a ConfigMap's
    value (looked up in the render when the chart makes it), ("secret", NAME, KEY, optional),
    or the entry's valueFrom as it is. Sources the operator manages (extraEnvFrom) are listed
    as "envFrom {their entry}"."""
    env: dict[str, Any] = {}
    c = container(doc)
    for source in c.get("envFrom", []):
        config_map = None
        if "configMapRef" in source:
            config_map = named(docs, "ConfigMap", source["configMapRef"]["name"])
        if config_map is not None:
            env.update(config_map["data"])
        else:
            env["envFrom " + yaml.safe_dump(source, default_flow_style=True).strip()] = source
    for entry in c.get("env", []):
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        elif "secretKeyRef" in entry["valueFrom"]:
            ref = entry["valueFrom"]["secretKeyRef"]
            env[entry["name"]] = ("secret", ref["name"], ref["key"], ref.get("optional", False))
        else:
            env[entry["name"]] = entry["valueFrom"]
    return env


def references(doc: Doc) -> Iterator[tuple[str, str]]:
    """(kind, name) of each ConfigMap, Secret and claim a workload's pod reads."""
    spec = pod_spec(doc)
    for c in spec["containers"]:
        for source in c.get("envFrom", []):
            if "configMapRef" in source:
                yield "ConfigMap", source["configMapRef"]["name"]
            if "secretRef" in source:
                yield "Secret", source["secretRef"]["name"]
        for entry in c.get("env", []):
            if "secretKeyRef" in entry.get("valueFrom", {}):
                yield "Secret", entry["valueFrom"]["secretKeyRef"]["name"]
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            yield "Secret", volume["secret"]["secretName"]
        if "persistentVolumeClaim" in volume:
            yield "PersistentVolumeClaim", volume["persistentVolumeClaim"]["claimName"]


def mounted_volume(doc: Doc, path: str) -> Doc:
    """The volume mounted at `path` in the workload's container."""
    (mount,) = [m for m in container(doc).get("volumeMounts", []) if m["mountPath"] == path]
    (volume,) = [v for v in pod_spec(doc)["volumes"] if v["name"] == mount["name"]]
    return {**volume, "readOnly": mount.get("readOnly", False)}


def workloads(docs: tuple[Doc, ...]) -> list[Doc]:
    return objects(docs, "Deployment") + objects(docs, "Job")


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


# -- the chart as helm and Kubernetes see it -------------------------------------------------------


def test_the_chart_is_versioned_with_the_app() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert CHART_YAML["apiVersion"] == "v2"
    assert CHART_YAML["appVersion"] == pyproject["project"]["version"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_helm_lint_strict(scenario: str) -> None:
    result = helm(
        "lint", "--strict", "--kube-version", KUBE_VERSIONS[0], *values_args(scenario), str(CHART)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout, result.stdout


@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_object_is_valid_kubernetes(scenario: str, kube_version: str) -> None:
    # Strict: an unknown field (a typo, a field of a newer version) fails like a wrong type.
    docs = render(scenario, kube_version=kube_version)
    assert docs
    for doc in docs:
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        try:
            kubernetes_validate.validate(doc, kube_version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(part) for part in exc.path)
            pytest.fail(
                f"{where} is not valid for Kubernetes {kube_version}: {path}: {exc.message}"
            )
        except kubernetes_validate.SchemaNotFoundError as exc:
            pytest.fail(f"{where}: {exc.message}")


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_object_carries_the_standard_labels(scenario: str) -> None:
    for doc in render(scenario):
        labels = doc["metadata"]["labels"]
        for key in ("name", "instance", "version", "managed-by"):
            assert f"app.kubernetes.io/{key}" in labels, (doc["kind"], doc["metadata"]["name"])
        assert labels["app.kubernetes.io/instance"] == RELEASE
        assert labels["helm.sh/chart"] == f"{CHART_YAML['name']}-{CHART_YAML['version']}"


# -- the app's configuration reaches every pod -----------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_variable_compose_gives_the_app_reaches_each_pod(scenario: str) -> None:
    needed = set(COMPOSE["x-workbench-env"])
    docs = render(scenario)
    for component, doc in pods(docs).items():
        env = environment(docs, doc)
        missing = needed - set(env)
        assert not missing, f"{component} lacks {sorted(missing)}"
        assert env["DJANGO_ENV"] == "production"
        assert env["PORT"] == str(container(workload(docs, "web"))["ports"][0]["containerPort"])


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_secret_variable_has_its_key(scenario: str) -> None:
    """A required key missing from its Secret would hold the pod in CreateContainerConfigError:
    the chart-made Secret holds each one; an operator's Secret is named as the values say."""
    docs = render(scenario)
    existing = yaml.safe_load((CHART / "ci" / SCENARIOS[scenario]).read_text())["secrets"].get(
        "existingSecret"
    )
    for component, doc in pods(docs).items():
        for name, source in environment(docs, doc).items():
            if not (isinstance(source, tuple) and source[0] == "secret"):
                continue
            _, secret_name, key, optional = source
            assert key == name, f"{component}: {name} comes from key {key}"
            secret = named(docs, "Secret", secret_name)
            if existing:
                assert secret is None and secret_name == existing, (component, name)
            elif not optional:
                assert secret is not None, f"{component}: Secret {secret_name} is not made"
                assert key in secret["data"], f"{component}: {secret_name} has no {key}"


def test_the_chart_made_secret_holds_the_values_given() -> None:
    docs = render("default")
    given = yaml.safe_load((CHART / "ci" / SCENARIOS["default"]).read_text())["secrets"]
    (secret,) = [s for s in objects(docs, "Secret") if not is_hook(s) and "SECRET_KEY" in s["data"]]
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    for name, value in given.items():
        assert data[name] == value
    assert data["CELERY_BROKER_URL"] == given["REDIS_URL"]  # as in the compose file


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_signing_certificate_is_where_sheet_signing_p12_points(scenario: str) -> None:
    docs = render(scenario)
    for component, doc in pods(docs).items():
        if component == "beat":
            continue  # beat queues tasks and seals nothing
        p12 = environment(docs, doc)["SHEET_SIGNING_P12"]
        volume = mounted_volume(doc, posixpath.dirname(p12))
        assert volume["readOnly"]
        (item,) = volume["secret"]["items"]
        assert item["path"] == posixpath.basename(p12)
        made = named(docs, "Secret", volume["secret"]["secretName"])
        if made is not None:
            assert item["key"] in made["data"]
        else:
            values = yaml.safe_load((CHART / "ci" / SCENARIOS[scenario]).read_text())
            assert volume["secret"]["secretName"] == values["signing"]["existingSecret"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_web_and_worker_share_media_root(scenario: str) -> None:
    docs = render(scenario)
    claims = set()
    for doc in [workload(docs, "web"), *workers(docs)]:
        volume = mounted_volume(doc, environment(docs, doc)["MEDIA_ROOT"])
        assert not volume["readOnly"]
        claims.add(volume["persistentVolumeClaim"]["claimName"])
    (claim,) = claims
    made = named(docs, "PersistentVolumeClaim", claim)
    if scenario == "existing-secret":
        assert made is None  # the operator's claim
    else:
        assert made is not None and "ReadWriteMany" in made["spec"]["accessModes"]


def test_a_change_of_configuration_rolls_the_pods() -> None:
    def checksums(*sets: str) -> dict[str, dict[str, str]]:
        return {
            component: {
                key: value
                for key, value in doc["spec"]["template"]["metadata"]["annotations"].items()
                if key.startswith("checksum/")
            }
            for docs in [render("default", *sets)]
            for component, doc in pods(docs, job=False).items()
        }

    before = checksums()
    assert len(before) == 5  # web, three workers, beat
    assert before == checksums()  # rendering is deterministic
    config = checksums("config.logLevel=DEBUG")
    secret = checksums("secrets.SECRET_KEY=another-placeholder-secret-key-0123456789")
    for component in before:
        assert set(before[component]) == {"checksum/config", "checksum/secret", "checksum/signing"}
        assert config[component]["checksum/config"] != before[component]["checksum/config"]
        assert secret[component]["checksum/secret"] != before[component]["checksum/secret"]
        assert secret[component]["checksum/config"] == before[component]["checksum/config"]


# -- processes: what runs where --------------------------------------------------------------------


def test_probes_are_routes_the_app_serves_to_the_kubelet(settings: Any) -> None:
    docs = render("default")
    web = container(workload(docs, "web"))
    ports = {port["name"]: port["containerPort"] for port in web["ports"]}
    expected = {"startupProbe": views.healthz, "livenessProbe": views.healthz}
    expected["readinessProbe"] = views.readyz
    for probe, view in expected.items():
        get = web[probe]["httpGet"]
        assert get["port"] in ports, f"{probe} asks port {get['port']}"
        assert resolve(get["path"]).func is view, f"{probe}: {get['path']}"
    # The kubelet asks the pod's address over plain HTTP: not an allowed host, not HTTPS.
    settings.ALLOWED_HOSTS = ["workbench.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    answer = Client().get(web["livenessProbe"]["httpGet"]["path"], HTTP_HOST="10.42.0.17:8000")
    assert answer.status_code == 200


def test_the_web_server_is_gunicorn_on_its_port_and_never_migrates() -> None:
    for scenario in SCENARIOS:
        docs = render(scenario)
        web = workload(docs, "web")
        line = command_line(web)
        start = line.index("gunicorn")
        assert line[start + 1] == "workbench.wsgi"
        port = container(web)["ports"][0]["containerPort"]
        assert line[line.index("--bind") + 1] == f"0.0.0.0:{port}"
        for doc in objects(docs, "Deployment"):
            assert not any("migrate" in word for word in command_line(doc)), doc["metadata"]


def test_migrations_run_in_a_pre_install_and_pre_upgrade_hook_as_compose_runs_them() -> None:
    # The compose web command migrates and loads the catalog before gunicorn: the Job runs the
    # same manage.py steps in the same order.
    compose_steps = re.findall(
        r"python manage\.py (\w+)", COMPOSE["services"]["web"]["command"].split("gunicorn")[0]
    )
    assert compose_steps[0] == "migrate"
    for scenario in SCENARIOS:
        job = workload(render(scenario), "migrations")
        assert {"pre-install", "pre-upgrade"} <= hook_events(job)
        assert (
            "before-hook-creation" in job["metadata"]["annotations"]["helm.sh/hook-delete-policy"]
        )
        steps = re.findall(r"python manage\.py (\w+)", " ".join(command_line(job)))
        assert steps == compose_steps
        assert pod_spec(job)["restartPolicy"] == "Never"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_hook_reads_only_what_exists_before_it(scenario: str) -> None:
    """Hooks run before the release's own objects exist on a first install: what the Job reads
    is a hook of lower weight (or the operator's), and holds what the pods read. The pods read
    none of the hooks' copies, which are deleted once the Job has succeeded."""
    docs = render(scenario)
    job = workload(docs, "migrations")
    for kind, name in references(job):
        made = named(docs, kind, name)
        if made is None:
            continue  # the operator's Secret
        assert is_hook(made), f"the Job reads {kind}/{name}, which is made after it"
        assert {"pre-install", "pre-upgrade"} <= hook_events(made)
        assert hook_weight(made) < hook_weight(job)
    for component, doc in pods(docs, job=False).items():
        for kind, name in references(doc):
            made = named(docs, kind, name)
            assert made is None or not is_hook(made), f"{component} reads the hook's {kind}"

    def config_data(doc: Doc) -> dict[str, str]:
        (config_map,) = [
            made
            for source in container(doc)["envFrom"]
            if "configMapRef" in source
            and (made := named(docs, "ConfigMap", source["configMapRef"]["name"])) is not None
        ]
        return config_map["data"]

    for doc in pods(docs, job=False).values():
        assert config_data(job) == config_data(doc)
    copies = [s for s in objects(docs, "Secret") if is_hook(s)]
    for copy in copies:
        original = named(docs, "Secret", copy["metadata"]["name"].replace("-migrate", "", 1))
        assert original is not None and original["data"] == copy["data"]
    assert len(copies) == (0 if scenario == "existing-secret" else 2)


# -- workers: one Deployment per queue, or as the operator merges them -----------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_workers_consume_every_queue_the_settings_declare_once(scenario: str) -> None:
    """Work routed to a queue no worker consumes would wait forever; a queue two Deployments
    consume is only what an operator asks for (allowSharedQueues)."""
    compose = COMPOSE["services"]["worker"]["command"]
    (compose_queues,) = [w for w in compose if w.startswith("--queues=")]
    assert set(compose_queues.removeprefix("--queues=").split(",")) == settings_queues()
    consumed: list[str] = []
    for doc in workers(render(scenario)):
        line = command_line(doc)
        assert line[:4] == compose[:4] == ["celery", "-A", "workbench", "worker"]
        queues = worker_queues(doc)
        assert len(queues) == len(set(queues)), doc["metadata"]["name"]
        consumed += queues
    assert set(consumed) == settings_queues()
    assert len(consumed) == len(set(consumed)), f"a queue consumed twice: {sorted(consumed)}"


@pytest.mark.parametrize("scenario", ["default", "workers-network"])
def test_each_worker_consumes_exactly_the_queues_its_entry_lists(scenario: str) -> None:
    docs = render(scenario)
    values = values_of(scenario)
    fullname = f"{RELEASE}-{CHART_YAML['name']}"
    by_name = {doc["metadata"]["name"]: doc for doc in workers(docs)}
    assert set(by_name) == {f"{fullname}-worker-{w['name']}" for w in values["workers"]}
    for entry in values["workers"]:
        doc = by_name[f"{fullname}-worker-{entry['name']}"]
        assert worker_queues(doc) == entry["queues"]
        labels = doc["spec"]["template"]["metadata"]["labels"]
        assert labels[WORKER_LABEL] == entry["name"]
        # Each Deployment selects its own pods only.
        for other in workers(docs):
            other_labels = other["spec"]["template"]["metadata"]["labels"]
            assert selects(doc["spec"]["selector"]["matchLabels"], other_labels) == (other is doc)


def test_by_default_each_queue_has_its_own_worker_sized_for_its_work() -> None:
    docs = render("default")
    values = values_of("default")
    by_queue = {tuple(worker_queues(doc)): doc for doc in workers(docs)}
    assert set(by_queue) == {(queue,) for queue in settings_queues()}
    for entry in values["workers"]:
        doc = by_queue[tuple(entry["queues"])]
        assert container(doc)["resources"] == entry["resources"]
        concurrency = entry.get("concurrency", values["worker"]["concurrency"])
        assert f"--concurrency={concurrency}" in command_line(doc)
        assert doc["spec"]["replicas"] == entry.get(
            "replicaCount", values["worker"]["replicaCount"]
        )

    def memory(doc: Doc) -> int:
        match = re.fullmatch(r"(\d+)(Mi|Gi)", container(doc)["resources"]["limits"]["memory"])
        assert match, container(doc)["resources"]
        return int(match.group(1)) * (1024 if match.group(2) == "Gi" else 1)

    def concurrency(doc: Doc) -> int:
        (word,) = [w for w in command_line(doc) if w.startswith("--concurrency=")]
        return int(word.removeprefix("--concurrency="))

    # Sheets are rendered to PDF in memory; probe runs wait on the network, more at once.
    assert memory(by_queue[("reports",)]) > memory(by_queue[("default",)])
    assert concurrency(by_queue[("probes",)]) > concurrency(by_queue[("default",)])


def test_each_worker_has_its_own_replicas_autoscaling_and_scheduling() -> None:
    docs = render("workers-network")
    values = values_of("workers-network")
    by_queue = {tuple(worker_queues(doc)): doc for doc in workers(docs)}
    main, probes = by_queue[("default", "reports")], by_queue[("probes",)]
    main_values, probes_values = values["workers"]
    assert main["spec"]["replicas"] == main_values["replicaCount"]
    assert f"--concurrency={main_values['concurrency']}" in command_line(main)
    assert f"--concurrency={probes_values['concurrency']}" in command_line(probes)
    assert container(main)["resources"] == main_values["resources"]
    # An entry without resources gets worker.resources.
    assert container(probes)["resources"] == values["worker"]["resources"]
    # The probes worker is autoscaled (its entry's keys over worker.autoscaling); main is not.
    (hpa,) = [
        h
        for h in objects(docs, "HorizontalPodAutoscaler")
        if h["spec"]["scaleTargetRef"]["name"] == probes["metadata"]["name"]
    ]
    assert hpa["spec"]["maxReplicas"] == probes_values["autoscaling"]["maxReplicas"]
    assert hpa["spec"]["minReplicas"] == values["worker"]["autoscaling"]["minReplicas"]
    assert "replicas" not in probes["spec"]
    assert {
        h["spec"]["scaleTargetRef"]["name"] for h in objects(docs, "HorizontalPodAutoscaler")
    } == {probes["metadata"]["name"]}
    # Its own nodes and tolerations; the others keep the chart-wide ones.
    assert pod_spec(probes)["nodeSelector"] == probes_values["nodeSelector"]
    assert pod_spec(probes)["tolerations"] == probes_values["tolerations"]
    for doc in (main, workload(docs, "web"), workload(docs, "beat")):
        assert pod_spec(doc)["nodeSelector"] == values["nodeSelector"]
        assert "tolerations" not in pod_spec(doc)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_worker_gets_the_environment_of_the_web_pods(scenario: str) -> None:
    docs = render(scenario)
    web = workload(docs, "web")
    web_only = {"PROMETHEUS_MULTIPROC_DIR"}  # gunicorn's metrics folder
    expected = {k: v for k, v in environment(docs, web).items() if k not in web_only}
    for doc in workers(docs):
        assert environment(docs, doc) == expected, doc["metadata"]["name"]
        assert container(doc)["envFrom"] == container(web)["envFrom"]
        annotations = doc["spec"]["template"]["metadata"]["annotations"]
        assert annotations == web["spec"]["template"]["metadata"]["annotations"]


def write_values(tmp_path: Path, values: dict[str, Any]) -> Path:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def test_a_queue_given_to_two_workers_is_refused_unless_asked(tmp_path: Path) -> None:
    values = default_values()
    values["workers"] = [
        {"name": "main", "queues": ["default", "reports", "probes"]},
        {"name": "more-probes", "queues": ["probes"], "nodeSelector": {"pool": "b"}},
    ]
    assert '"probes" is consumed by two workers' in render_failure(values, tmp_path)
    values["allowSharedQueues"] = True
    result = helm("template", RELEASE, str(CHART), "-f", str(write_values(tmp_path, values)))
    assert result.returncode == 0, result.stderr
    docs = tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)
    assert len([d for d in workers(docs) if "probes" in worker_queues(d)]) == 2


def test_a_queue_left_out_or_unknown_is_refused_by_name(tmp_path: Path) -> None:
    values = default_values()
    values["workers"] = [{"name": "main", "queues": ["default", "reports"]}]
    assert '"probes" is consumed by no worker' in render_failure(values, tmp_path)
    values["workers"] = [{"name": "main", "queues": ["default", "reports", "probes", "report"]}]
    assert '"report"' in render_failure(values, tmp_path)
    values["workers"] = [
        {"name": "main", "queues": ["default", "reports"]},
        {"name": "main", "queues": ["probes"]},
    ]
    assert 'two workers are named "main"' in render_failure(values, tmp_path)


def test_chart_0_1_worker_values_still_make_the_single_worker() -> None:
    """worker.queues (chart 0.1's values) makes the one worker it made, under the same name and
    selector (a Deployment's selector cannot change), and `workers` is ignored."""
    docs = render("legacy-worker")
    values = values_of("legacy-worker")
    (worker,) = workers(docs)
    assert worker["metadata"]["name"] == f"{RELEASE}-{CHART_YAML['name']}-worker"
    assert worker["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/name": CHART_YAML["name"],
        "app.kubernetes.io/instance": RELEASE,
        "app.kubernetes.io/component": "worker",
    }
    assert worker_queues(worker) == values["worker"]["queues"]
    assert worker["spec"]["replicas"] == values["worker"]["replicaCount"]
    assert container(worker)["resources"] == values["worker"]["resources"]


def test_beat_runs_exactly_once() -> None:
    compose = COMPOSE["services"]["beat"]["command"]
    for scenario in SCENARIOS:
        docs = render(scenario)
        beat = workload(docs, "beat")
        assert beat["spec"]["replicas"] == 1
        assert beat["spec"]["strategy"] == {"type": "Recreate"}
        assert command_line(beat)[:4] == compose[:4]
        targets = {
            hpa["spec"]["scaleTargetRef"]["name"]
            for hpa in objects(docs, "HorizontalPodAutoscaler")
        }
        assert beat["metadata"]["name"] not in targets


# -- exposure and availability ---------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_service_and_the_budget_select_the_web_pods_only(scenario: str) -> None:
    docs = render(scenario)
    (service,) = objects(docs, "Service")
    (budget,) = objects(docs, "PodDisruptionBudget")
    web_port = container(workload(docs, "web"))["ports"][0]["name"]
    assert [p["targetPort"] for p in service["spec"]["ports"]] == [web_port]
    for selector in (service["spec"]["selector"], budget["spec"]["selector"]["matchLabels"]):
        for component, doc in pods(docs).items():
            labels = doc["spec"]["template"]["metadata"]["labels"]
            assert selects(selector, labels) == (component == "web"), (selector, component)


def test_ingress_with_tls_and_autoscaling() -> None:
    docs = render("ingress-autoscaling")
    values = yaml.safe_load((CHART / "ci" / SCENARIOS["ingress-autoscaling"]).read_text())
    (ingress,) = objects(docs, "Ingress")
    (service,) = objects(docs, "Service")
    assert ingress["spec"]["ingressClassName"] == values["ingress"]["className"]
    hosts = [rule["host"] for rule in ingress["spec"]["rules"]]
    assert hosts == [h["host"] for h in values["ingress"]["hosts"]]
    assert ingress["spec"]["tls"] == values["ingress"]["tls"]
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["name"] == service["metadata"]["name"]
            assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    env = environment(docs, workload(docs, "web"))
    assert env["ALLOWED_HOSTS"].split(",") == hosts  # from the ingress when not given
    assert env["WORKBENCH_BASE_URL"] == f"https://{hosts[0]}"

    scaled = {}
    for hpa in objects(docs, "HorizontalPodAutoscaler"):
        target = hpa["spec"]["scaleTargetRef"]
        assert target["kind"] == "Deployment"
        scaled[target["name"]] = hpa["spec"]
    # worker.autoscaling (as in chart 0.1) scales every worker.
    for component, deployment in pods(docs, job=False).items():
        if component == "beat":
            continue
        spec = scaled.pop(deployment["metadata"]["name"])
        autoscaling = values["web" if component == "web" else "worker"]["autoscaling"]
        assert spec["minReplicas"] == autoscaling["minReplicas"]
        assert spec["maxReplicas"] == autoscaling["maxReplicas"]
        assert "replicas" not in deployment["spec"]  # the HPA owns the count
    assert not scaled
    assert not objects(render("default"), "HorizontalPodAutoscaler")
    assert not objects(render("default"), "Ingress")


# -- network policies ------------------------------------------------------------------------------

FENCED = [name for name in SCENARIOS if name != "legacy-worker"]  # the legacy file turns them off


def policies_of(docs: tuple[Doc, ...], doc: Doc) -> list[Doc]:
    """The NetworkPolicies that select the workload's pods."""
    labels = doc["spec"]["template"]["metadata"]["labels"]
    found = []
    for policy in objects(docs, "NetworkPolicy"):
        selector = policy["spec"]["podSelector"]
        assert set(selector) == {"matchLabels"}, policy["metadata"]["name"]
        if selects(selector["matchLabels"], labels):
            found.append(policy)
    return found


def policy_of(docs: tuple[Doc, ...], doc: Doc) -> Doc:
    (policy,) = policies_of(docs, doc)
    return policy


def ports_of(rule: Doc) -> set[tuple[int, str]]:
    return {(p["port"], p.get("protocol", "TCP")) for p in rule.get("ports", [])}


def rule_to(policy: Doc, ports: set[tuple[int, str]]) -> Doc | None:
    """The policy's egress rule for exactly these ports, if any."""
    found = [rule for rule in policy["spec"]["egress"] if ports_of(rule) == ports]
    assert len(found) <= 1, (policy["metadata"]["name"], ports)
    return found[0] if found else None


def expected_peers(endpoint: Doc) -> list[Doc] | None:
    """The `to` the chart should write for a destination of the values (None: any address)."""
    peers: list[Doc] = [{"ipBlock": {"cidr": cidr}} for cidr in endpoint.get("cidrs", [])]
    pods_peer = {
        key: endpoint[key] for key in ("namespaceSelector", "podSelector") if endpoint.get(key)
    }
    if pods_peer:
        peers.append(pods_peer)
    return peers or None


def url_ports(values: Doc, *names: str, default: int) -> set[int]:
    if values["secrets"].get("existingSecret"):
        return {default}
    urls = [values["secrets"].get(name) for name in names]
    return {urlsplit(url).port or default for url in urls if url}


def queue_of(task: str) -> str:
    from workbench.celery import app

    return app.amqp.router.route({}, task)["queue"].name


@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
@pytest.mark.parametrize("scenario", FENCED)
def test_network_policies_are_valid_kubernetes(scenario: str, kube_version: str) -> None:
    policies = objects(render(scenario, kube_version=kube_version), "NetworkPolicy")
    assert len(policies) >= 4  # web, a worker at least, beat, the migration Job
    for policy in policies:
        assert policy["apiVersion"] == "networking.k8s.io/v1"
        kubernetes_validate.validate(policy, kube_version, strict=True)


@pytest.mark.parametrize("scenario", FENCED)
def test_each_pod_is_fenced_by_exactly_one_policy(scenario: str) -> None:
    docs = render(scenario)
    selected = []
    for component, doc in pods(docs).items():
        policy = policy_of(docs, doc)
        selected.append(policy["metadata"]["name"])
        assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"], component
        if component != "web":
            assert not policy["spec"].get("ingress"), f"{component} accepts traffic"
        # The Job's policy is made just before it, as the Job's copies are, with its values.
        if component == "migrations":
            assert is_hook(policy) and {"pre-install", "pre-upgrade"} <= hook_events(policy)
            assert hook_weight(policy) < hook_weight(doc)
        else:
            assert not is_hook(policy), component
    assert sorted(selected) == sorted(p["metadata"]["name"] for p in objects(docs, "NetworkPolicy"))


@pytest.mark.parametrize("scenario", FENCED)
def test_the_web_pods_accept_their_port_from_the_ingress_controller_only(scenario: str) -> None:
    docs = render(scenario)
    values = values_of(scenario)["networkPolicy"]["web"]
    web = workload(docs, "web")
    (port,) = container(web)["ports"]
    (rule,) = policy_of(docs, web)["spec"]["ingress"]
    assert rule["ports"] == [{"port": port["containerPort"], "protocol": "TCP"}]
    controller = {
        key: values[selector]
        for key, selector in (
            ("namespaceSelector", "ingressNamespaceSelector"),
            ("podSelector", "ingressPodSelector"),
        )
        if values[selector]
    }
    # No controller named: any pod of the release's namespace, and nothing outside it.
    assert rule["from"] == [controller or {"podSelector": {}}, *values["extraIngressFrom"]]


@pytest.mark.parametrize("scenario", FENCED)
def test_every_pod_reaches_dns_postgresql_and_redis_only_as_the_values_say(scenario: str) -> None:
    docs = render(scenario)
    values = values_of(scenario)
    np = values["networkPolicy"]
    postgresql = set(np["postgresql"]["ports"]) or url_ports(values, "DATABASE_URL", default=5432)
    redis = set(np["redis"]["ports"]) or url_ports(
        values, "REDIS_URL", "CELERY_BROKER_URL", default=6379
    )
    for component, doc in pods(docs).items():
        policy = policy_of(docs, doc)
        dns = rule_to(policy, {(53, "UDP"), (53, "TCP")})
        assert dns is not None and dns.get("to") == expected_peers(np["dns"]), component
        for name, ports in (("postgresql", postgresql), ("redis", redis)):
            rule = rule_to(policy, {(port, "TCP") for port in ports})
            assert rule is not None, f"{component} cannot reach {name} on {ports}"
            assert rule.get("to") == expected_peers(np[name]), (component, name)
        for rule in np["extraEgress"]:
            assert rule in policy["spec"]["egress"], component
        for rule in np["web"]["extraEgress"]:
            assert (rule in policy["spec"]["egress"]) == (component == "web"), component
        if component in ("beat", "migrations"):
            assert len(policy["spec"]["egress"]) == 3 + len(np["extraEgress"]), component


@pytest.mark.parametrize("scenario", ["default", "workers-network"])
def test_smtp_is_reached_by_the_workers_that_send_mail_only(scenario: str) -> None:
    docs = render(scenario)
    values = values_of(scenario)
    smtp = values["networkPolicy"]["smtp"]
    # The notices are sent by a task of a queue the policy opens SMTP to.
    assert queue_of("reports.tasks.notices_task") in smtp["queues"]
    ports = {(port, "TCP") for port in smtp["ports"] or [values["config"]["email"]["port"]]}
    senders = 0
    for component, doc in pods(docs).items():
        rule = rule_to(policy_of(docs, doc), ports)
        sends = component_of(doc) == "worker" and bool(
            set(worker_queues(doc)) & set(smtp["queues"])
        )
        assert (rule is not None) == sends, component
        if rule is not None:
            senders += 1
            assert rule.get("to") == expected_peers(smtp)
    assert senders >= 1


def probe_rules(docs: tuple[Doc, ...], ports: list[int]) -> dict[str, Doc]:
    wanted = {(port, "TCP") for port in ports}
    found = {}
    for component, doc in pods(docs).items():
        rule = rule_to(policy_of(docs, doc), wanted)
        if rule is not None:
            found[component] = rule
    return found


def test_the_probe_worker_reaches_the_clusters_networks_as_the_values_say() -> None:
    assert (
        queue_of("poc.tasks.probe_run_task")
        in values_of("default")["networkPolicy"]["probes"]["queues"]
    )
    # Given: egressCIDRs and the ports, to the probes worker and (connection tests) the web pods.
    docs = render("workers-network")
    probes = values_of("workers-network")["networkPolicy"]["probes"]
    found = probe_rules(docs, probes["ports"])
    (worker,) = [d for d in workers(docs) if "probes" in worker_queues(d)]
    assert set(found) == {"web", worker["metadata"]["name"]}
    for rule in found.values():
        assert rule["to"] == [{"ipBlock": {"cidr": cidr}} for cidr in probes["egressCIDRs"]]

    # Not given: PROBE_ALLOWED_NETWORKS' addresses and CIDRs, on 22, 443, 6443 and 6820; host
    # names cannot be written in a policy; link-local (metadata) stays out of 0.0.0.0/0.
    default_ports = values_of("default")["networkPolicy"]["probes"]["ports"]
    assert sorted(default_ports) == [22, 443, 6443, 6820]
    allowed = "config.probeAllowedNetworks={10.20.0.0/16,192.0.2.7,*.gpu.example.com,0.0.0.0/0}"
    docs = render("default", allowed)
    found = probe_rules(docs, default_ports)
    assert set(found) == {"web", f"{RELEASE}-{CHART_YAML['name']}-worker-probes"}
    for rule in found.values():
        assert rule["to"] == [
            {"ipBlock": {"cidr": "10.20.0.0/16"}},
            {"ipBlock": {"cidr": "192.0.2.7/32"}},
            {"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.0.0/16"]}},
        ]
    assert environment(docs, workload(docs, "web"))["PROBE_ALLOWED_NETWORKS"].startswith("10.20.")
    # The web pods' connection tests can be left out; the worker keeps its rule.
    found = probe_rules(render("default", allowed, "networkPolicy.probes.web=false"), default_ports)
    assert set(found) == {f"{RELEASE}-{CHART_YAML['name']}-worker-probes"}
    # Nothing allowed, nothing reached (the app's guard refuses every address then too).
    assert not probe_rules(render("default"), default_ports)


def test_disabling_network_policies_removes_them() -> None:
    assert len(objects(render("default"), "NetworkPolicy")) == 6  # web, 3 workers, beat, Job
    assert not objects(render("default", "networkPolicy.enabled=false"), "NetworkPolicy")
    assert not objects(render("legacy-worker"), "NetworkPolicy")


# -- extra variables -------------------------------------------------------------------------------


def test_extra_env_reaches_every_pod_and_the_migration_job() -> None:
    """Settings the chart has no value for (single sign-on...) pass through extraEnv and
    extraEnvFrom to the web, every worker, beat and the Job alike."""
    docs = render("workers-network")
    values = values_of("workers-network")
    assert values["extraEnv"] and values["extraEnvFrom"]
    for component, doc in pods(docs).items():
        c = container(doc)
        for entry in values["extraEnv"]:
            assert entry in c["env"], f"{component} lacks {entry['name']}"
        for source in values["extraEnvFrom"]:
            assert source in c["envFrom"], f"{component} lacks {source}"
    docs = render(
        "default", "extraEnv[0].name=LDAP_SERVER_URI", "extraEnv[0].value=ldaps://ldap.example.com"
    )
    for component, doc in pods(docs).items():
        assert environment(docs, doc)["LDAP_SERVER_URI"] == "ldaps://ldap.example.com", component


def test_an_extra_env_entry_with_both_value_and_value_from_is_refused(tmp_path: Path) -> None:
    values = default_values()
    values["extraEnv"] = [
        {
            "name": "OIDC_ISSUER",
            "value": "x",
            "valueFrom": {"secretKeyRef": {"name": "a", "key": "b"}},
        }
    ]
    assert "extraEnv" in render_failure(values, tmp_path)


# -- security --------------------------------------------------------------------------------------


def image_uid() -> int:
    """The user id the Dockerfile gives the image's user (runAsNonRoot needs a number)."""
    match = re.search(r"useradd [^\n]*--uid (\d+)", (ROOT / "Dockerfile").read_text())
    assert match, "the Dockerfile must give its user a fixed --uid"
    return int(match.group(1))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_pod_runs_unprivileged_on_a_read_only_root(scenario: str) -> None:
    for doc in workloads(render(scenario)):
        where = doc["metadata"]["name"]
        spec = pod_spec(doc)
        assert spec["securityContext"]["runAsNonRoot"] is True, where
        assert spec["securityContext"]["runAsUser"] == image_uid(), where
        assert spec["automountServiceAccountToken"] is False, where
        for c in spec["containers"]:
            context = c["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, where
            assert context["readOnlyRootFilesystem"] is True, where
            assert context["capabilities"]["drop"] == ["ALL"], where
            assert context.get("privileged", False) is False, where
            assert "resources" in c and c["resources"]["requests"], where
        assert "emptyDir" in mounted_volume(doc, "/tmp"), where


# -- values.schema.json ----------------------------------------------------------------------------


def render_failure(values: dict[str, Any], tmp_path: Path) -> str:
    result = helm("template", RELEASE, str(CHART), "-f", str(write_values(tmp_path, values)))
    assert result.returncode != 0, "helm rendered values it should refuse"
    return result.stderr


def default_values() -> dict[str, Any]:
    return yaml.safe_load((CHART / "ci" / SCENARIOS["default"]).read_text())


def test_a_missing_secret_key_is_refused_by_name(tmp_path: Path) -> None:
    values = default_values()
    del values["secrets"]["SECRET_KEY"]
    assert "SECRET_KEY" in render_failure(values, tmp_path)
    values["secrets"]["SECRET_KEY"] = ""
    assert "SECRET_KEY" in render_failure(values, tmp_path)


def test_required_values_are_refused_by_name(tmp_path: Path) -> None:
    values = default_values()
    values["signing"]["p12Base64"] = ""
    assert "p12Base64" in render_failure(values, tmp_path)
    values = default_values()
    values["config"]["allowedHosts"] = []
    assert "ALLOWED_HOSTS" in render_failure(values, tmp_path)
    values = default_values()
    values["secrets"]["SECRET_KEYS"] = "a typo"
    assert "SECRET_KEYS" in render_failure(values, tmp_path)


def test_the_defaults_alone_are_refused() -> None:
    # values.yaml holds no secret: an install must give them (or name existing Secrets).
    result = helm("template", RELEASE, str(CHART), "--set", "config.allowedHosts={a.example.com}")
    assert result.returncode != 0
    for name in (
        "SECRET_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "WORKBENCH_CREDENTIALS_KEYS",
        "WORKBENCH_AUDIT_KEYS",
    ):
        assert name in result.stderr
