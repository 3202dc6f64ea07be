"""Which NVLink counters count errors: on NVLink 5 (Blackwell) the FEC histogram, the lanes'
errors before correction and the total of recovery events are no error counts, also in facts
stored before the parser named them apart; discarded packets are."""

import pytest

from poc.probes.parsers import parse_outputs
from poc.probes.rules.health import judge_node, nvlink_error_counter
from tests.probes.test_parsers_dcgm_nvlink_text import blackwell_errors, blackwell_status


def _nvlink_problem(**changed: int) -> dict | None:
    node = parse_outputs(
        [
            ("nvidia-smi nvlink -s", blackwell_status()),
            ("nvidia-smi nvlink -e", blackwell_errors(**changed)),
        ]
    )
    judged = judge_node(node)
    problems = [p for gpu in judged["gpus"] for p in gpu["problems"]]
    found = [p for p in problems if p["code"] == "nvlink_errors"]
    return dict(found[0]) if found else None


def test_recovery_events_are_counted_once_and_discards_count() -> None:
    assert _nvlink_problem() is None
    # One failed recovery: its own counter and the total both say 1; the problem counts 1.
    problem = _nvlink_problem(Link_recovery_failed_events=1, Total_link_recovery_events=1)
    assert problem is not None and problem["value"] == 1
    assert "total_link_recovery_events" not in problem["message"]
    problem = _nvlink_problem(Tx_discards=7)
    assert problem is not None and problem["value"] == 7 and "tx_discards 7" in problem["message"]


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        ("replay_errors", True),
        ("crc_errors", True),
        ("symbol_errors", True),
        ("effective_errors", True),
        ("link_recovery_successful_events", True),
        ("tx_discards", True),
        ("fec_bin_3", False),
        ("pre_fec_lane_1", False),
        # Stored by the parser before it named the NVLink 5 counters apart.
        ("fec_errors_0", False),
        ("raw_errors_lane_1", False),
        ("total_link_recovery_events", False),
        ("tx_packets", False),
        ("rx_bytes", False),
    ],
)
def test_counter_names(name: str, counts: bool) -> None:
    assert nvlink_error_counter(name) is counts
