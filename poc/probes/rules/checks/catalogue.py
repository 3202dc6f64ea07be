"""The catalogue: every check an acceptance action can be bound to, with its
parameters, statement and evaluation; the one mapping from facts to checks."""

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from poc.probes.rules.checks.base import Check, Param, number
from poc.probes.rules.checks.gpu_health import (
    all_gpus_healthy,
    dcgm_diag_passed,
    no_actionable_xid,
    nvlink_all_active,
)
from poc.probes.rules.checks.inventory import (
    cuda_at_least,
    driver_at_least,
    ecc_enabled,
    gpu_count_at_least,
    gpu_model_in,
    gpus_per_node_at_least,
    mig_enabled,
    mig_profile_count_at_least,
    persistence_mode_enabled,
)
from poc.probes.rules.checks.performance import (
    MATMUL_DTYPES,
    copy_bandwidth_percent_of_peak,
    host_to_device_gbps_at_least,
    matmul_percent_of_peak,
)
from poc.probes.rules.checks.scheduling import (
    FAILURE_SCENARIOS,
    controlled_failure_clean,
    no_cluster,
    product_present,
    queues_present,
)


def _count_param(maximum: int, label: str | Promise) -> Param:
    return Param("count", "int", label, minimum=1, maximum=maximum)


def _percent_param() -> Param:
    return Param(
        "percent", "float", gettext_lazy("Minimum percentage of the peak"), minimum=1, maximum=100
    )


CHECKS: tuple[Check, ...] = (
    Check(
        key="gpu_count_at_least",
        label=gettext_lazy("GPU count"),
        description=gettext_lazy("The run found at least this many GPUs, over all its nodes."),
        params=(_count_param(1_000_000, gettext_lazy("Minimum number of GPUs")),),
        statement=lambda p: _("GPU count ≥ %(count)s") % p,
        evaluate=gpu_count_at_least,
    ),
    Check(
        key="gpus_per_node_at_least",
        label=gettext_lazy("GPUs per node"),
        description=gettext_lazy("Every node of the run has at least this many GPUs."),
        params=(_count_param(1024, gettext_lazy("Minimum number of GPUs per node")),),
        statement=lambda p: _("GPUs per node ≥ %(count)s") % p,
        evaluate=gpus_per_node_at_least,
    ),
    Check(
        key="gpu_model_in",
        label=gettext_lazy("GPU model"),
        description=gettext_lazy(
            "Every GPU is one of the given models: a name contained in the GPU's name (any case, "
            '"H200" matches "NVIDIA H200") or an exact PCI device id ("0x2335").'
        ),
        params=(Param("models", "str_list", gettext_lazy("Models (names or PCI device ids)")),),
        statement=lambda p: (
            _("GPU model is one of: %(models)s") % {"models": ", ".join(p["models"])}
        ),
        evaluate=gpu_model_in,
    ),
    Check(
        key="all_gpus_healthy",
        label=gettext_lazy("GPU health"),
        description=gettext_lazy(
            "The health rules find no problem on any node (ECC, remapped rows, PCIe link, clock "
            "slowdowns, fabric, NVLink, Xid errors, NVSwitch errors, GPUs the driver could not "
            "initialise, DCGM, GPU count). Checks that could not be made are listed in the "
            "measured value; unable when none could."
        ),
        params=(
            Param("allow_degraded", "bool", gettext_lazy("Accept degraded GPUs"), default=False),
        ),
        statement=lambda p: (
            _("All GPUs healthy or degraded") if p["allow_degraded"] else _("All GPUs healthy")
        ),
        evaluate=all_gpus_healthy,
    ),
    Check(
        key="no_actionable_xid",
        label=gettext_lazy("No actionable Xid"),
        description=gettext_lazy(
            "The kernel log of every node holds no Xid error that the health rules count as a "
            "problem (per NVIDIA's Xid catalogue; unknown codes count; Xid 154 by the recovery "
            "action it names). Unable where no kernel log was read."
        ),
        params=(),
        statement=lambda p: _("No actionable Xid error in the kernel log"),
        evaluate=no_actionable_xid,
    ),
    Check(
        key="dcgm_diag_passed",
        label=gettext_lazy("DCGM diagnostics"),
        description=gettext_lazy(
            "Every node ran DCGM diagnostics (dcgmi diag) and no test failed; warnings fail the "
            "check only when they are not allowed."
        ),
        params=(Param("allow_warn", "bool", gettext_lazy("Accept warnings"), default=True),),
        statement=lambda p: (
            _("DCGM diagnostics passed (warnings allowed)")
            if p["allow_warn"]
            else _("DCGM diagnostics passed without warnings")
        ),
        evaluate=dcgm_diag_passed,
    ),
    Check(
        key="ecc_enabled",
        label=gettext_lazy("ECC enabled"),
        description=gettext_lazy("ECC is enabled on every GPU."),
        params=(),
        statement=lambda p: _("ECC enabled on every GPU"),
        evaluate=ecc_enabled,
    ),
    Check(
        key="persistence_mode_enabled",
        label=gettext_lazy("Persistence mode"),
        description=gettext_lazy("Persistence mode is enabled on every GPU."),
        params=(),
        statement=lambda p: _("Persistence mode enabled on every GPU"),
        evaluate=persistence_mode_enabled,
    ),
    Check(
        key="mig_enabled",
        label=gettext_lazy("MIG enabled"),
        description=gettext_lazy("MIG mode is currently enabled on every GPU."),
        params=(),
        statement=lambda p: _("MIG enabled on every GPU"),
        evaluate=mig_enabled,
    ),
    Check(
        key="mig_profile_count_at_least",
        label=gettext_lazy("MIG devices of a profile"),
        description=gettext_lazy(
            "The run has at least this many MIG GPU instances of the given profile (such as "
            "3g.40gb), or compute instances of a compute instance profile (such as 1c.3g.40gb), "
            "over all its GPUs."
        ),
        params=(
            Param("profile", "mig_profile", gettext_lazy("Profile, such as 1g.10gb")),
            _count_param(10_000, gettext_lazy("Minimum number of MIG devices")),
        ),
        statement=lambda p: _("MIG devices of profile %(profile)s ≥ %(count)s") % p,
        evaluate=mig_profile_count_at_least,
    ),
    Check(
        key="nvlink_all_active",
        label=gettext_lazy("NVLink links active"),
        description=gettext_lazy(
            "Every GPU reports NVLink links, all of them active, and at least the given number."
        ),
        params=(
            Param(
                "min_links",
                "int",
                gettext_lazy("Minimum active links per GPU"),
                default=1,
                minimum=1,
                maximum=64,
            ),
        ),
        statement=lambda p: _("All NVLink links active, at least %(min_links)s per GPU") % p,
        evaluate=nvlink_all_active,
    ),
    Check(
        key="driver_at_least",
        label=gettext_lazy("Driver version"),
        description=gettext_lazy(
            "The NVIDIA driver of every node is at least this version (compared number by number)."
        ),
        params=(Param("version", "version", gettext_lazy("Minimum version, such as 535.104.05")),),
        statement=lambda p: _("Driver version ≥ %(version)s") % p,
        evaluate=driver_at_least,
    ),
    Check(
        key="cuda_at_least",
        label=gettext_lazy("CUDA version"),
        description=gettext_lazy(
            "The CUDA version the driver of every node supports is at least this version."
        ),
        params=(Param("version", "version", gettext_lazy("Minimum version, such as 12.2")),),
        statement=lambda p: _("CUDA version ≥ %(version)s") % p,
        evaluate=cuda_at_least,
    ),
    Check(
        key="matmul_percent_of_peak",
        label=gettext_lazy("Matrix product vs. published peak"),
        description=gettext_lazy(
            "Every benchmarked GPU reaches at least this percentage of its published dense peak "
            "(no sparsity) in a large matrix product of the given type. Unable without a benchmark "
            "or for a GPU model without a published peak."
        ),
        params=(
            Param("dtype", "choice", gettext_lazy("Data type"), choices=MATMUL_DTYPES),
            _percent_param(),
        ),
        statement=lambda p: (
            _("%(dtype)s matrix product ≥ %(percent)s %% of published peak")
            % {"dtype": p["dtype"], "percent": number(p["percent"])}
        ),
        evaluate=matmul_percent_of_peak,
    ),
    Check(
        key="copy_bandwidth_percent_of_peak",
        label=gettext_lazy("Memory bandwidth vs. published peak"),
        description=gettext_lazy(
            "Every benchmarked GPU copies device memory (bytes read plus written per second) at "
            "at least this percentage of its published memory bandwidth."
        ),
        params=(_percent_param(),),
        statement=lambda p: (
            _("Device memory copy ≥ %(percent)s %% of published bandwidth")
            % {"percent": number(p["percent"])}
        ),
        evaluate=copy_bandwidth_percent_of_peak,
    ),
    Check(
        key="host_to_device_gbps_at_least",
        label=gettext_lazy("Host-to-device bandwidth"),
        description=gettext_lazy(
            "Every benchmarked GPU receives pinned host memory at least this fast (GB/s)."
        ),
        params=(
            Param(
                "gbps",
                "float",
                gettext_lazy("Minimum GB/s"),
                minimum=0,
                exclusive_minimum=True,
                maximum=10_000,
            ),
        ),
        statement=lambda p: (
            _("Host-to-device bandwidth ≥ %(gbps)s GB/s") % {"gbps": number(p["gbps"])}
        ),
        evaluate=host_to_device_gbps_at_least,
    ),
)

CHECKS = (
    *CHECKS,
    Check(
        key="controlled_failure_clean",
        label=gettext_lazy("Controlled failure fails cleanly"),
        description=gettext_lazy(
            "A run with controlled failures asked the cluster's scheduler for more than it may "
            "give (more GPUs than any node has, or more than a GPU quota allows); it passes "
            "when the request was refused, or left pending with a reason a user can read, in "
            "time. Unable when the run had no controlled failures."
        ),
        params=(
            Param(
                "scenario",
                "choice",
                gettext_lazy("Scenario"),
                default="more_gpus_than_any_node",
                choices=FAILURE_SCENARIOS,
            ),
        ),
        statement=lambda p: _("Controlled failure %(scenario)s refused with a reason") % p,
        evaluate=no_cluster,
        evaluate_cluster=controlled_failure_clean,
    ),
    Check(
        key="scheduler_queues_present",
        label=gettext_lazy("Scheduler queues exist"),
        description=gettext_lazy(
            "The cluster's scheduler has every named queue (Volcano or KAI / Run:ai queues on "
            "Kubernetes, partitions on Slurm)."
        ),
        params=(Param("names", "str_list", gettext_lazy("Queue or partition names")),),
        statement=lambda p: (
            _("Scheduler queues exist: %(names)s") % {"names": ", ".join(p["names"])}
        ),
        evaluate=no_cluster,
        evaluate_cluster=queues_present,
    ),
    Check(
        key="product_present",
        label=gettext_lazy("Product installed"),
        description=gettext_lazy(
            "The cluster runs the product (GPU Operator, Volcano, KAI / Run:ai, OpenShift AI), "
            "and, when asked, reports it ready."
        ),
        params=(
            Param(
                "product",
                "choice",
                gettext_lazy("Product"),
                choices=("kubernetes-gpu-operator", "volcano", "kai", "runai", "openshift-ai"),
            ),
            Param("ready", "bool", gettext_lazy("Must be ready"), default=True),
        ),
        statement=lambda p: (
            (_("%(product)s installed and ready") if p["ready"] else _("%(product)s installed")) % p
        ),
        evaluate=no_cluster,
        evaluate_cluster=product_present,
    ),
)

CHECKS_BY_KEY: dict[str, Check] = {check.key: check for check in CHECKS}
