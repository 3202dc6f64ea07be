"""Licences as SPDX expressions: the SPDX spelling, exceptions with WITH, proprietary parts as
LicenseRef-, and a refusal that names the unknown identifier and the nearest known ones."""

import pytest
from django.core.exceptions import ValidationError

from reports.procurement.licences import is_spdx, spdx_normalize


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("apache-2.0", "Apache-2.0"),
        ("mit or Apache-2.0", "MIT OR Apache-2.0"),
        (
            "GPL-2.0-or-later WITH classpath-exception-2.0",
            "GPL-2.0-or-later WITH Classpath-exception-2.0",
        ),
        ("Apache-2.0 AND LicenseRef-NVIDIA-EULA", "Apache-2.0 AND LicenseRef-NVIDIA-EULA"),
        ("(MIT  OR  BSD-3-Clause) AND Apache-2.0", "(MIT OR BSD-3-Clause) AND Apache-2.0"),
        (
            "DocumentRef-spdx-tool-1.2:LicenseRef-MIT-Style-2",
            "DocumentRef-spdx-tool-1.2:LicenseRef-MIT-Style-2",
        ),
    ],
)
def test_valid_expressions_come_back_in_spdx_spelling(given: str, normal: str) -> None:
    assert spdx_normalize(given) == normal
    assert is_spdx(given)


def test_an_unknown_identifier_is_named_with_the_nearest_known_ones() -> None:
    with pytest.raises(ValidationError) as refused:
        spdx_normalize("Apache2 OR MIT")
    message = refused.value.messages[0]
    assert message.startswith("Apache2 is not an SPDX licence or exception identifier")
    assert "the nearest known are Apache-2.0" in message and "LicenseRef-<name>" in message
    assert "LicenseRef-scancode" not in message  # the package's own names are not suggested


def test_an_unknown_exception_is_named_too() -> None:
    with pytest.raises(ValidationError, match="foo-exception is not an SPDX"):
        spdx_normalize("Apache-2.0 WITH foo-exception")


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("GPL-2.0 WITH MIT", "cannot be used as an exception"),
        ("Apache-2.0 AND (", "is no SPDX expression"),
        ("", "Give an SPDX expression"),
        ("   ", "Give an SPDX expression"),
        ("MIT OR " * 100 + "MIT", "at most 500 characters"),
        ("Proprietary", "name a licence outside the SPDX list as LicenseRef-"),
    ],
)
def test_bad_expressions_are_refused_with_the_reason(given: str, says: str) -> None:
    with pytest.raises(ValidationError) as refused:
        spdx_normalize(given)
    assert says in refused.value.messages[0]
    assert not is_spdx(given)
