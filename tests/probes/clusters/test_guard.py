"""The network guard: only listed networks, never link-local or metadata, one resolution."""

import pytest

from poc.probes.connectors.guard import GuardRefused, checked_address

ALL = ["0.0.0.0/0", "::/0"]


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",
        "169.254.0.1",
        "fe80::1",
        "fd00:ec2::254",
        "100.100.100.200",
        "::ffff:169.254.169.254",
        "metadata.google.internal",
        "METADATA.google.internal.",
    ],
)
def test_metadata_and_link_local_are_refused_whatever_the_list_says(host: str) -> None:
    with pytest.raises(GuardRefused, match="never probed"):
        checked_address(host, 22, ALL, resolver=lambda h, p: ["10.0.0.1"])


def test_a_name_is_resolved_once_and_the_checked_address_is_returned() -> None:
    calls = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append((host, port))
        return ["10.1.2.3"]

    assert checked_address("gpu-01.lab", 2222, ["10.1.0.0/16"], resolver=resolver) == "10.1.2.3"
    assert calls == [("gpu-01.lab", 2222)]


def test_a_name_resolving_to_metadata_is_refused() -> None:
    with pytest.raises(GuardRefused, match="never probed"):
        checked_address("rebind.example", 443, ALL, resolver=lambda h, p: ["169.254.169.254"])


def test_addresses_outside_the_list_are_refused_and_names_can_be_listed() -> None:
    with pytest.raises(GuardRefused, match="not in PROBE_ALLOWED_NETWORKS"):
        checked_address("10.9.0.1", 22, ["10.1.0.0/16"])
    with pytest.raises(GuardRefused, match="not in PROBE_ALLOWED_NETWORKS"):
        checked_address("10.9.0.1", 22, [])
    listed = checked_address(
        "k8s.lab.example", 6443, ["k8s.lab.example"], resolver=lambda h, p: ["192.0.2.7"]
    )
    assert listed == "192.0.2.7"
    wild = checked_address(
        "n1.gpu.example", 22, ["*.gpu.example"], resolver=lambda h, p: ["192.0.2.8"]
    )
    assert wild == "192.0.2.8"
    with pytest.raises(GuardRefused):
        checked_address("gpu.example", 22, ["*.gpu.example"], resolver=lambda h, p: ["192.0.2.8"])


@pytest.mark.parametrize("host", ["", "a b", "x/y", "h" * 300])
def test_junk_is_not_a_host(host: str) -> None:
    with pytest.raises(GuardRefused, match="not a host"):
        checked_address(host, 22, ALL)


def test_an_unresolvable_name_says_so() -> None:
    with pytest.raises(GuardRefused, match="does not resolve"):
        checked_address("no-such-host.invalid", 22, ALL)
