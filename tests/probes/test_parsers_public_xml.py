"""`nvidia-smi -q -x` shapes seen in public captures from many boards and drivers that the
shared H200 capture does not hold: NVML error text written bare in place of a value, and the
stream of whole documents that `nvidia-smi -q -x -l N` writes.

Each input is made in the test from the real H200 capture, changed the way the other driver or
invocation prints it (the docstrings say how).
"""

from poc.probes.parsers import parse_output
from tests.probes.gpu_fixtures import H200_XML, fixture_text

H200_UUID = "GPU-5c8fa947-f3fa-cdcc-b5dd-8e2f93630a3e"
H200_SERIAL = "1653724066869"


def lost_gpu_xml() -> str:
    """The H200 document as nvidia-smi writes it when NVML fails for some fields (a GPU fallen
    off the bus: NVML_ERROR_GPU_IS_LOST, NVML_ERROR_TIMEOUT). Every schema from v10 to v13
    writes the error text bare in the element, where -q and CSV bracket it ("[GPU is lost]");
    the fabric registration failed with a timeout."""
    xml = fixture_text(H200_XML)
    replacements = {
        "<product_name>NVIDIA H200</product_name>": "<product_name>GPU is lost</product_name>",
        f"<uuid>{H200_UUID}</uuid>": "<uuid>GPU is lost</uuid>",
        f"<serial>{H200_SERIAL}</serial>": "<serial>Timeout</serial>",
        "<gpu_temp>41 C</gpu_temp>": "<gpu_temp>GPU is lost</gpu_temp>",
        "<fabric>\n\t\t\t<state>N/A</state>\n\t\t\t<status>N/A</status>": (
            "<fabric>\n\t\t\t<state>Not Found</state>\n\t\t\t<status>Timeout</status>"
        ),
    }
    for old, new in replacements.items():
        assert old in xml
        xml = xml.replace(old, new)
    return xml


def test_nvml_error_text_is_no_name_uuid_or_serial() -> None:
    (gpu,) = parse_output(lost_gpu_xml())["gpus"]
    assert (gpu["name"], gpu["uuid"], gpu["serial"]) == (None, None, None)
    assert gpu["temperature_c"] is None
    assert gpu["fabric_state"] is None
    # The fabric status is "Success" or the registration's NVML error: the error is its value.
    assert gpu["fabric_status"] == "Timeout"
    assert gpu["pci_bus_id"] == "00000000:00:06.0"
    assert gpu["memory_total_mib"] == 143771


def test_two_lost_gpus_are_not_one_gpu() -> None:
    """Two GPUs whose UUID NVML could not read: the error text must not pair them up as the
    same GPU when the document is merged with another output of the node."""
    head, _, tail = fixture_text(H200_XML).partition('<gpu id="00000000:00:06.0">')
    gpu, _, rest = tail.partition("</gpu>")
    second = gpu.replace("00000000:00:06.0", "00000000:00:07.0")
    xml = (
        head.replace("<attached_gpus>1</attached_gpus>", "<attached_gpus>2</attached_gpus>")
        + '<gpu id="00000000:00:06.0">'
        + gpu
        + "</gpu>\n"
        + '<gpu id="00000000:00:07.0">'
        + second
        + "</gpu>"
        + rest
    ).replace(f"<uuid>{H200_UUID}</uuid>", "<uuid>GPU is lost</uuid>")
    gpus = parse_output(xml)["gpus"]
    assert [g["uuid"] for g in gpus] == [None, None]
    assert [g["pci_bus_id"] for g in gpus] == ["00000000:00:06.0", "00000000:00:07.0"]


def test_mig_device_uuid_error_text_is_unknown() -> None:
    """A MIG device as R535-R590 drivers write it (index, instance ids, memory) with the UUID
    NVML could not read."""
    xml = fixture_text(H200_XML)
    block = "<mig_devices>\n\t\t\tNone\n\t\t</mig_devices>"
    assert block in xml
    xml = xml.replace(
        block,
        "<mig_devices><mig_device><index>0</index><gpu_instance_id>1</gpu_instance_id>"
        "<compute_instance_id>0</compute_instance_id><uuid>Not Found</uuid>"
        "<fb_memory_usage><total>71424 MiB</total></fb_memory_usage></mig_device></mig_devices>",
    )
    (device,) = parse_output(xml)["gpus"][0]["mig_devices"]
    assert device["uuid"] is None
    assert (device["gpu_instance_id"], device["memory_total_mib"]) == (1, 71424)


def test_looped_query_reads_the_last_document() -> None:
    """`nvidia-smi -q -x -l 5 > file`: every 5 s a whole document, XML declaration and document
    type line included, one after the other; the loop was stopped in the middle of the last
    one. The newest complete document is read."""
    xml = fixture_text(H200_XML)
    assert "<gpu_temp>41 C</gpu_temp>" in xml
    second = xml.replace("<gpu_temp>41 C</gpu_temp>", "<gpu_temp>57 C</gpu_temp>")
    stopped = xml[: len(xml) // 2]
    node = parse_output(xml + second + stopped)
    (gpu,) = node["gpus"]
    assert gpu["temperature_c"] == 57.0
    assert gpu["uuid"] == H200_UUID
    assert node["driver_version"] == "580.159.04"
    assert node["warnings"] == ["3 documents (a query run with -l): the last complete one is read"]
