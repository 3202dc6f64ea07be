"""The Helm chart (deploy/helm/workbench), rendered by the real helm and checked object by object
against the Kubernetes schemas of the version the chart declares, offline (kubernetes-validate
bundles them). Then the chart is held to the app: every variable the compose file gives the app
reaches each pod, the probes are routes the app serves, migrations run once in a hook that
finds what it reads, beat runs once, every pod is locked down.

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
# own Secrets and claim, and an ingress with TLS plus autoscaling.
SCENARIOS = {
    "default": "default-values.yaml",
    "existing-secret": "existing-secret-values.yaml",
    "ingress-autoscaling": "ingress-autoscaling-values.yaml",
}
COMPONENTS = ("web", "worker", "beat", "migrations")
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
    value (looked up in the render, which must hold it), or ("secret", NAME, KEY, optional)."""
    env: dict[str, Any] = {}
    c = container(doc)
    for source in c.get("envFrom", []):
        if "configMapRef" in source:
            config_map = named(docs, "ConfigMap", source["configMapRef"]["name"])
            assert config_map, f"{source} names a ConfigMap the chart does not make"
            env.update(config_map["data"])
        else:
            pytest.fail(f"unexpected envFrom {source}")
    for entry in c.get("env", []):
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        else:
            ref = entry["valueFrom"]["secretKeyRef"]
            env[entry["name"]] = ("secret", ref["name"], ref["key"], ref.get("optional", False))
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
    for component in COMPONENTS:
        env = environment(docs, workload(docs, component))
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
    for component in COMPONENTS:
        for name, source in environment(docs, workload(docs, component)).items():
            if not isinstance(source, tuple):
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
    for component in ("web", "worker", "migrations"):
        doc = workload(docs, component)
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
    for component in ("web", "worker"):
        doc = workload(docs, component)
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
                for key, value in workload(docs, component)["spec"]["template"]["metadata"][
                    "annotations"
                ].items()
                if key.startswith("checksum/")
            }
            for docs in [render("default", *sets)]
            for component in ("web", "worker", "beat")
        }

    before = checksums()
    assert before == checksums()  # rendering is deterministic
    config = checksums("config.logLevel=DEBUG")
    secret = checksums("secrets.SECRET_KEY=another-placeholder-secret-key-0123456789")
    for component in ("web", "worker", "beat"):
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
    for component in ("web", "worker", "beat"):
        for kind, name in references(workload(docs, component)):
            made = named(docs, kind, name)
            assert made is None or not is_hook(made), f"{component} reads the hook's {kind}"

    def config_data(doc: Doc) -> dict[str, str]:
        (ref,) = [s["configMapRef"]["name"] for s in container(doc)["envFrom"]]
        config_map = named(docs, "ConfigMap", ref)
        assert config_map is not None
        return config_map["data"]

    for component in ("web", "worker", "beat"):
        assert config_data(job) == config_data(workload(docs, component))
    copies = [s for s in objects(docs, "Secret") if is_hook(s)]
    for copy in copies:
        original = named(docs, "Secret", copy["metadata"]["name"].replace("-migrate", "", 1))
        assert original is not None and original["data"] == copy["data"]
    assert len(copies) == (0 if scenario == "existing-secret" else 2)


def test_the_worker_consumes_every_queue_the_settings_declare() -> None:
    from django.conf import settings

    compose = COMPOSE["services"]["worker"]["command"]
    for scenario in SCENARIOS:
        line = command_line(workload(render(scenario), "worker"))
        assert line[:4] == compose[:4] == ["celery", "-A", "workbench", "worker"]
        (queues,) = [w for w in line if w.startswith("--queues=")]
        assert queues in compose
        assert set(queues.removeprefix("--queues=").split(",")) == {
            queue.name for queue in settings.CELERY_TASK_QUEUES
        }


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
        for component in COMPONENTS:
            labels = workload(docs, component)["spec"]["template"]["metadata"]["labels"]
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
    for component in ("web", "worker"):
        deployment = workload(docs, component)
        spec = scaled.pop(deployment["metadata"]["name"])
        assert spec["minReplicas"] == values[component]["autoscaling"]["minReplicas"]
        assert "replicas" not in deployment["spec"]  # the HPA owns the count
    assert not scaled
    assert not objects(render("default"), "HorizontalPodAutoscaler")
    assert not objects(render("default"), "Ingress")


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
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump(values))
    result = helm("template", RELEASE, str(CHART), "-f", str(path))
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
    for name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "WORKBENCH_CREDENTIALS_KEYS"):
        assert name in result.stderr
