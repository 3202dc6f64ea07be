"""MIG compute instances: a device named "MIG 1c.3g.71gb" is one compute slice inside a 3g.71gb
GPU instance. Both levels are kept; GPU instances are counted only where the output identifies
them (the GPU Instance ID of `nvidia-smi -q`, an R450 MIG UUID), never from device names."""

from poc.probes.facts import mig_levels
from poc.probes.parsers import detect, parse_output, parse_outputs
from poc.probes.present import mig_text
from poc.probes.rules.checks import run_check
from tests.probes.helpers import H200

# The GPU line of the real H200 capture (`nvidia-smi -L` in misc.txt).
H200_LINE = next(
    line
    for line in (H200 / "misc.txt").read_text().splitlines()
    if line.startswith("GPU 0: NVIDIA H200")
)


def listing(*profiles: str, uuids: tuple[str, ...] = ()) -> str:
    """`nvidia-smi -L` of the H200 with MIG device lines in the documented format."""
    lines = [H200_LINE]
    for number, profile in enumerate(profiles):
        uuid = uuids[number] if uuids else f"MIG-{number:08x}-1111-2222-3333-444444444444"
        lines.append(f"  MIG {profile:<14} Device  {number}: (UUID: {uuid})")
    return "\n".join(lines) + "\n"


def mig_query_text(devices: list[tuple[int, int]]) -> str:
    """`nvidia-smi -q` of the H200 in MIG mode, its MIG Device blocks as the driver documents
    them: (GPU Instance ID, Compute Instance ID) each."""
    blocks = "".join(
        f"""    MIG Device
        Index                             : {number}
        GPU Instance ID                   : {gi}
        Compute Instance ID               : {ci}
        Shared FB Memory Usage
            Total                         : 71424 MiB
"""
        for number, (gi, ci) in enumerate(devices)
    )
    return f"""==============NVSMI LOG==============

Driver Version                            : 580.159.04
CUDA Version                              : 13.0

Attached GPUs                             : 1
GPU 00000000:00:06.0
    Product Name                          : NVIDIA H200
    GPU UUID                              : GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e
    MIG Mode
        Current                           : Enabled
        Pending                           : Enabled
{blocks}    Processes                             : None
"""


def test_two_compute_instances_are_not_two_gpu_instances() -> None:
    text = listing("1c.3g.71gb", "1c.3g.71gb")
    assert detect(text) == "smi-list"
    (gpu,) = parse_output(text)["gpus"]
    devices = gpu["mig_devices"]
    assert [d.get("compute_profile") for d in devices] == ["1c.3g.71gb", "1c.3g.71gb"]
    assert [d["profile"] for d in devices] == ["3g.71gb", "3g.71gb"]  # their GPU instance's
    levels = mig_levels(gpu)
    assert levels["compute_instances"] == 2
    assert levels["compute_profiles"] == {"1c.3g.71gb": 2}
    # The listing does not say whether both sit in one GPU instance: not counted.
    assert levels["gpu_instances"] is None
    assert mig_text(gpu) == "on: 2× 1c.3g.71gb"


def test_the_gpu_instance_id_of_the_query_counts_the_gpu_instances() -> None:
    node = parse_outputs(
        [
            ("nvidia-smi -q", mig_query_text([(1, 0), (1, 1)])),
            ("nvidia-smi -L", listing("1c.3g.71gb", "1c.3g.71gb")),
        ]
    )
    (gpu,) = node["gpus"]
    levels = mig_levels(gpu)
    assert levels["gpu_instances"] == [
        {
            "gpu_instance_id": 1,
            "profile": "3g.71gb",
            "compute_profiles": ["1c.3g.71gb", "1c.3g.71gb"],
        }
    ]
    assert [(d["gpu_instance_id"], d["compute_instance_id"]) for d in gpu["mig_devices"]] == [
        (1, 0),
        (1, 1),
    ]
    assert mig_text(gpu) == "on: 2× 1c.3g.71gb (GPU instances: 1× 3g.71gb)"


def test_two_gpu_instances_each_with_a_compute_instance() -> None:
    node = parse_outputs(
        [
            ("nvidia-smi -q", mig_query_text([(1, 0), (2, 0)])),
            ("nvidia-smi -L", listing("1c.3g.71gb", "1c.3g.71gb")),
        ]
    )
    levels = mig_levels(node["gpus"][0])
    assert [gi["gpu_instance_id"] for gi in levels["gpu_instances"] or []] == [1, 2]
    assert mig_text(node["gpus"][0]) == "on: 2× 1c.3g.71gb (GPU instances: 2× 3g.71gb)"


def test_whole_gpu_instance_devices_read_as_before() -> None:
    """A device spanning its GPU instance is named by the GPU instance profile alone."""
    (gpu,) = parse_output(listing("3g.71gb", "2g.35gb", "1g.18gb+me"))["gpus"]
    assert [d["profile"] for d in gpu["mig_devices"]] == ["3g.71gb", "2g.35gb", "1g.18gb+me"]
    assert [d.get("compute_profile") for d in gpu["mig_devices"]] == [
        "3g.71gb",
        "2g.35gb",
        "1g.18gb+me",
    ]
    assert mig_text(gpu) == "on: 1× 1g.18gb+me, 1× 2g.35gb, 1× 3g.71gb"


def test_r450_uuids_identify_the_gpu_instance() -> None:
    """R450 drivers wrote "GPU instance/compute instance" into the MIG UUID."""
    gpu_uuid = "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"
    text = listing(
        "1c.3g.71gb",
        "2c.3g.71gb",
        uuids=(f"MIG-{gpu_uuid}/1/0", f"MIG-{gpu_uuid}/1/1"),
    )
    levels = mig_levels(parse_output(text)["gpus"][0])
    assert levels["compute_profiles"] == {"1c.3g.71gb": 1, "2c.3g.71gb": 1}
    assert levels["gpu_instances"] == [
        {
            "gpu_instance_id": 1,
            "profile": "3g.71gb",
            "compute_profiles": ["1c.3g.71gb", "2c.3g.71gb"],
        }
    ]


def test_the_query_alone_counts_devices_and_gpu_instances() -> None:
    (gpu,) = parse_output(mig_query_text([(1, 0), (1, 1), (2, 0)]))["gpus"]
    levels = mig_levels(gpu)
    assert levels["compute_instances"] == 3
    assert len(levels["gpu_instances"] or []) == 2
    assert mig_text(gpu) == "on: 3 MIG devices in 2 GPU instances"


def test_the_profile_check_counts_gpu_instances_not_their_compute_slices() -> None:
    """Two "1c.3g.71gb" devices are one or two 3g.71gb GPU instances: one at least (passes at
    1), two only if each sits in its own (unable at 2, failed at 3); counted by their compute
    profile they are two."""
    node = parse_output(listing("1c.3g.71gb", "1c.3g.71gb"))

    def outcome(profile: str, count: int) -> dict:
        return run_check("mig_profile_count_at_least", {"profile": profile, "count": count}, [node])

    assert outcome("3g.71gb", 1)["status"] == "passed"
    unable = outcome("3g.71gb", 2)
    assert unable["status"] == "unable"
    assert "1 MIG GPU instance of profile 3g.71gb" in unable["measured"]
    assert "Up to 1 more" in unable["detail"]
    assert outcome("3g.71gb", 3)["status"] == "failed"
    compute = outcome("1c.3g.71gb", 2)
    assert compute["status"] == "passed"
    assert compute["measured"] == "2 MIG compute instances of profile 1c.3g.71gb"


def test_identified_gpu_instances_decide_the_profile_check() -> None:
    """With the GPU Instance ID of the query, two compute instances in one GPU instance are
    one GPU instance: two wanted fails."""
    node = parse_outputs(
        [
            ("nvidia-smi -q", mig_query_text([(1, 0), (1, 1)])),
            ("nvidia-smi -L", listing("1c.3g.71gb", "1c.3g.71gb")),
        ]
    )
    failed = run_check("mig_profile_count_at_least", {"profile": "3g.71gb", "count": 2}, [node])
    assert failed["status"] == "failed", failed
    assert failed["measured"].startswith("1 MIG GPU instance of profile 3g.71gb")
