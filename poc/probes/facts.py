"""The normalized fact document of one GPU node, the same whatever output it was read from.

Every parser returns this shape (see docs/probes.md for each field). A value the driver did not
report, or reported as `[N/A]`, `[Not Supported]` and the like, is None: unknown, never 0 or
False. Parsers fill what their input holds; `merge_nodes` combines documents read from several
outputs of the same node (a `-q -x` document, a `--query-gpu` CSV, `nvlink -s`, a kernel log).

The document is plain JSON (dicts, lists, str, int, float, bool, None) so it can be stored,
compared and frozen into a procurement sheet as it is. FACTS_FORMAT changes when a field changes
meaning; readers of stored documents check it.
"""

from typing import Any, NotRequired, TypedDict

FACTS_FORMAT = "workbench-gpu-facts/1"


class MigDevice(TypedDict):
    """One MIG device: a compute instance inside a GPU instance.

    Two levels: the GPU instance (`gpu_instance_id`, `profile`) and the compute instance in it
    (`compute_instance_id`, `compute_profile`). Several devices share a GPU instance when it is
    split into compute instances ("MIG 1c.3g.71gb" twice: two one-slice compute instances of
    one 3g.71gb GPU instance), so devices are not GPU instances: `mig_levels` counts those
    only where the input identifies them.
    """

    gpu_instance_id: int | None
    compute_instance_id: int | None
    profile: str | None  # "1g.10gb", "3g.40gb", ... as the driver names the GPU instance profile
    profile_id: int | None
    memory_total_mib: int | None
    uuid: str | None  # "MIG-..." where the input carries it (nvidia-smi -L)
    # The device's own profile as `nvidia-smi -L` names it: "1c.3g.71gb" for a compute instance
    # of one compute slice in a 3g.71gb GPU instance, "3g.71gb" for one that spans its whole
    # GPU instance; None where not read. Added without a format change: documents stored
    # before it was added lack it, and readers take a missing one as None.
    compute_profile: NotRequired[str | None]


class GpuFacts(TypedDict):
    index: int | None
    name: str | None
    pci_device_id: str | None  # "0x2335": the device part only, lower-case hex with 0x
    pci_bus_id: str | None  # "00000000:00:06.0" as the driver prints it (upper-case hex)
    uuid: str | None
    serial: str | None
    memory_total_mib: int | None
    memory_used_mib: int | None
    compute_capability: str | None  # "9.0"
    persistence_mode: bool | None
    mig_mode_current: bool | None  # True: MIG enabled
    mig_mode_pending: bool | None
    mig_devices: list[MigDevice]
    ecc_mode_current: bool | None
    ecc_mode_pending: bool | None
    ecc_volatile_corrected: int | None
    ecc_volatile_uncorrected: int | None
    ecc_aggregate_corrected: int | None
    ecc_aggregate_uncorrected: int | None
    remapped_rows_correctable: int | None
    remapped_rows_uncorrectable: int | None
    remapped_rows_pending: bool | None
    remapped_rows_failure: bool | None
    retired_pages_single_bit: int | None
    retired_pages_double_bit: int | None
    retired_pages_pending: bool | None
    pcie_gen_current: int | None
    pcie_gen_max: int | None  # the GPU's own maximum (`gpumax`) where both are reported
    pcie_width_current: int | None
    pcie_width_max: int | None
    power_draw_w: float | None
    power_limit_w: float | None
    temperature_c: float | None
    sm_clock_mhz: int | None
    sm_clock_max_mhz: int | None
    utilization_gpu_pct: float | None
    # Clock event (throttle) reasons: each known reason -> True active / False not active;
    # a reason absent from the dict was not reported. Names are the CSV field suffixes:
    # gpu_idle, applications_clocks_setting, sw_power_cap, hw_slowdown, hw_thermal_slowdown,
    # hw_power_brake_slowdown, sw_thermal_slowdown, sync_boost, display_clock_setting.
    clock_event_reasons: dict[str, bool]
    fabric_state: str | None  # "Completed", "In Progress", "Not Started", "Not Supported"
    fabric_status: str | None  # "Success" or the error text
    nvlink_links: list["NvLink"]  # empty: not read (or no NVLink)
    # What the driver says must be done to bring the GPU back: "None", "GPU Reset Required",
    # "Node Reboot Required", "Drain P2P", "Drain and Reset", another word as the driver wrote
    # it, or None when not reported. Added without a format change: documents stored before it
    # was added lack it, and readers take a missing one as None.
    recovery_action: NotRequired[str | None]


class NvLink(TypedDict):
    link: int
    active: bool
    speed_gbps: float | None  # GB/s per direction as `nvlink -s` prints it
    errors: dict[str, int]  # `nvlink -e` counters by name, where read


class XidEvent(TypedDict):
    code: int
    pci_bus_id: str | None  # as in the log line ("0000:3b:00" or "PCI:0000:3b:00")
    gpu_index: int | None  # resolved against the node's GPUs by bus id where possible
    message: str  # the rest of the line, trimmed to 500 characters
    timestamp: str | None  # the line's time stamp as written, if any


class SxidEvent(TypedDict):
    """One NVSwitch error code on one switch (an SXid: no GPU's Xid), from a kernel log."""

    switch_bus_id: str  # the switch's bus id as in the log line ("PCI:0000:06:00.0")
    code: int
    severity: str | None  # "Fatal" or "Non-fatal"; None: no line of the code names it
    timestamp: str | None  # the first line's time stamp as written, if any
    lines: int  # how many lines of the log name this code on this switch
    message: str  # what the severity line (else the first line) says after the code


class InitFailure(TypedDict):
    """A GPU the driver could not initialise ("NVRM: ... RmInitAdapter failed!")."""

    pci_bus_id: str | None  # as in the log line ("0000:3b:00.0"); None: the line names no GPU
    detail: str  # what follows "RmInitAdapter failed!", e.g. "(0x26:0xffff:1463)"


class DcgmTest(TypedDict):
    name: str
    category: str | None
    result: str  # Pass, Fail, Warn, Skip, Not Run (as dcgmi prints them)
    gpu_index: int | None  # None: the result covers the whole node
    info: str


class Benchmark(TypedDict, total=False):
    """Figures measured by the agent's --benchmark on one GPU (see docs/probes.md)."""

    gpu_index: int
    device_name: str
    framework: str  # "torch 2.11.0+cu130", "cupy 13.3.0"
    matmul_tflops: dict[str, float]  # {"bf16": 779.1, "fp16": ..., "tf32": ...}
    matmul_size: int
    device_copy_tbps: float  # bytes read + written per second, in TB/s
    host_to_device_gbps: float
    device_to_host_gbps: float
    error: str  # the benchmark could not run, and why


class NodeFacts(TypedDict):
    format: str
    host: str | None
    driver_version: str | None
    cuda_version: str | None
    gpus: list[GpuFacts]
    xid_events: list[XidEvent]
    # Added without a format change: documents stored before these fields were added lack
    # them, so readers take a missing one as an empty list.
    sxid_events: NotRequired[list[SxidEvent]]
    init_failures: NotRequired[list[InitFailure]]
    dcgm: list[DcgmTest]
    benchmarks: list[Benchmark]
    expected_gpu_count: int | None  # what the operator said the node should have, if anything
    sources: list[str]  # the inputs read, e.g. ["nvidia-smi -q -x", "query-gpu csv"]
    warnings: list[str]  # sections that could not be read, and why
    # Added without a format change (documents stored before lack them):
    # the NVML library's version, from `nvidia-smi --version` ("580.95"); missing: None.
    nvml_version: NotRequired[str | None]
    # Whether some output read lists the node's GPUs, so that `gpus` is its inventory. False
    # when only outputs that list none were read (a kernel log, a `-q` fragment without its GPU
    # header, `nvidia-smi --version`, dcgmi diag, a `-q` report cut off before its first GPU):
    # the inventory is then unknown, not empty. Missing: True (every stored document before
    # it was read from such an output).
    gpus_listed: NotRequired[bool]


def new_gpu(**values: Any) -> GpuFacts:
    """A GPU document with every field unknown, then the given values."""
    gpu: dict[str, Any] = {name: None for name in GpuFacts.__annotations__}
    gpu.update(mig_devices=[], clock_event_reasons={}, nvlink_links=[])
    gpu.update(values)
    return gpu  # type: ignore[return-value]


def new_node(**values: Any) -> NodeFacts:
    node: dict[str, Any] = {
        "format": FACTS_FORMAT,
        "host": None,
        "driver_version": None,
        "cuda_version": None,
        "gpus": [],
        "xid_events": [],
        "sxid_events": [],
        "init_failures": [],
        "dcgm": [],
        "benchmarks": [],
        "expected_gpu_count": None,
        "sources": [],
        "warnings": [],
        "nvml_version": None,
        "gpus_listed": True,
    }
    node.update(values)
    return node  # type: ignore[return-value]


class MigGpuInstance(TypedDict):
    """One GPU instance and the MIG devices (compute instances) in it."""

    gpu_instance_id: int
    profile: str | None
    compute_profiles: list[str | None]  # each compute instance's profile, in device order


class MigLevels(TypedDict):
    """A GPU's MIG layout at both levels (see `mig_levels`)."""

    compute_instances: int  # MIG devices: each is one compute instance
    compute_profiles: dict[str, int]  # device profile ("1c.3g.71gb", "?" unknown) -> count
    gpu_instances: list[MigGpuInstance] | None  # None: the input does not identify them


def mig_levels(gpu: GpuFacts) -> MigLevels:
    """The GPU's MIG devices as compute instances, and as GPU instances where known.

    Every MIG device is a compute instance. GPU instances are counted only where the input
    identifies each device's (the "GPU Instance ID" of `nvidia-smi -q` and `-q -x`, or an R450
    MIG UUID): device profiles alone cannot tell whether two "1c.3g.71gb" devices share a GPU
    instance or sit in two of them.
    """
    profiles: dict[str, int] = {}
    instances: dict[int, MigGpuInstance] = {}
    identified = True
    for device in gpu["mig_devices"]:
        own = device.get("compute_profile") or device["profile"]
        profiles[own or "?"] = profiles.get(own or "?", 0) + 1
        number = device["gpu_instance_id"]
        if number is None:
            identified = False
            continue
        instance = instances.setdefault(
            number, {"gpu_instance_id": number, "profile": None, "compute_profiles": []}
        )
        instance["profile"] = instance["profile"] or device["profile"]
        instance["compute_profiles"].append(device.get("compute_profile"))
    return {
        "compute_instances": len(gpu["mig_devices"]),
        "compute_profiles": profiles,
        "gpu_instances": [instances[n] for n in sorted(instances)] if identified else None,
    }
