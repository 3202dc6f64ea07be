"""The sheets page holds two forms with candidate boxes (the recommendation, and the revision to
generate): each element id appears once, so each label ticks its own box."""

import re
from collections import Counter

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_every_element_id_on_the_sheets_page_is_unique(evaluation, login) -> None:
    page = login(evaluation["alice"]).get(reverse("reports:sheets", args=["alpha"]))
    html = page.content.decode()
    ids = Counter(re.findall(r'\bid="([^"]+)"', html))
    assert [name for name, n in ids.items() if n > 1] == []
    assert 'id="id_recommendation_candidates_0"' in html and 'id="id_candidates_0"' in html
    assert 'for="id_recommendation_candidates_0"' in html
