"""The list tables' shared piece (workbench/tables.py): the query string holds the sort, the
filters and the page; a value it cannot use falls back and says so; links keep the rest of the
state; the page costs the same three queries whatever the size."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import QueryDict

from tests.factories import UserFactory
from workbench import tables
from workbench.tables import Column, Filter, TableSpec

pytestmark = pytest.mark.django_db

PATH = "/people/"


def _active(queryset: QuerySet[Any], value: str) -> QuerySet[Any]:
    return queryset if value == "all" else queryset.filter(is_active=True)


PEOPLE = TableSpec(
    dom_id="people",
    columns=(
        Column("name", "Name", ("username",)),
        Column("joined", "Joined", ("date_joined",), descending_first=True),
        Column("email", "E-mail", ("email",), costly=True),
        Column("note", "Note"),
    ),
    default_sort="name",
    filters=(
        Filter("staff", "Staff", "is_staff", choices=(("True", "Staff"), ("False", "Others"))),
        Filter("name", "Name contains", "username__icontains", kind="text"),
        Filter("joined_from", "Joined from", "date_joined__date__gte", kind="date"),
        Filter(
            "active",
            "Accounts",
            choices=(("yes", "Active"), ("all", "Every account")),
            method=_active,
            default="yes",
        ),
    ),
    per_page=2,
    costly_rows=3,
)
START = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def people() -> list[Any]:
    """Ten people a day apart, p0 the oldest; p1 and p2 are staff, p9 is deactivated."""
    users = []
    for n in range(10):
        user = UserFactory(username=f"p{n}", email=f"{9 - n}@example.com")
        user.date_joined = START + timedelta(days=n)
        user.is_staff = n in (1, 2)
        user.is_active = n != 9
        user.save()
        users.append(user)
    return users


def _table(query: str = "", spec: TableSpec = PEOPLE) -> tables.Table:
    return tables.table_for(
        spec, QueryDict(query), get_user_model().objects.all(), path=PATH, choices={}
    )


def _names(table: tables.Table) -> list[str]:
    return [user.username for user in table.rows]


def test_the_default_view_sorts_pages_and_counts(people) -> None:
    table = _table()
    assert _names(table) == ["p0", "p1"]  # p9 is left out by the "active" default
    assert (table.total, table.pages, table.start, table.end) == (9, 5, 1, 2)
    assert table.problems == [] and table.active == []
    name, joined, email, note = table.headers
    assert (name.aria_sort, name.indicator, name.url) == ("ascending", "▲", f"{PATH}?sort=-name")
    assert (joined.aria_sort, joined.url) == ("", f"{PATH}?sort=-joined")  # newest first
    assert email.url == f"{PATH}?sort=email"
    assert note.url == "" and note.aria_sort == ""


def test_a_sort_in_the_query_orders_the_rows_and_the_header_offers_the_reverse(people) -> None:
    table = _table("sort=-joined")
    assert _names(table) == ["p8", "p7"]
    joined = table.headers[1]
    assert (joined.aria_sort, joined.indicator) == ("descending", "▼")
    assert joined.url == f"{PATH}?sort=joined"
    assert table.headers[0].url == PATH  # back to the default sort: no parameter at all
    assert _names(_table("sort=joined")) == ["p0", "p1"]


def test_an_unknown_or_unsortable_column_falls_back_and_says_so(people) -> None:
    for sort in ("colour", "note", "-"):
        table = _table(f"sort={sort}")
        assert _names(table) == ["p0", "p1"]
        assert table.problems == [
            f"There is no column “{sort}” to sort by: the table is sorted by Name."
        ]
        assert table.headers[0].aria_sort == "ascending"


def test_a_page_past_the_end_shows_the_last_and_a_bad_page_the_first(people) -> None:
    last = _table("page=99")
    assert (last.page, _names(last)) == (5, ["p8"])
    assert last.problems == ["There is no page 99: showing the last page, 5."]
    for page in ("abc", "0", "-3"):
        first = _table(f"page={page}")
        assert first.page == 1 and _names(first) == ["p0", "p1"]
        assert first.problems == [f"“{page}” is not a page number: showing page 1."]


def test_rows_per_page_have_a_ceiling(people) -> None:
    many = _table("per_page=100000")
    assert many.per_page == tables.MAX_PER_PAGE and many.total == len(many.rows) == 9
    assert many.problems == ["At most 200 rows are shown per page: showing 200."]
    bad = _table("per_page=lots")
    assert bad.per_page == 2
    assert bad.problems == ["“lots” is not a number of rows per page: showing 2."]
    four = _table("per_page=4&page=2")
    assert _names(four) == ["p4", "p5", "p6", "p7"] and four.per_page_choices == [
        4,
        25,
        50,
        100,
        200,
    ]


def test_filters_apply_and_each_can_be_removed_alone(people) -> None:
    table = _table("staff=True&name=p&sort=-joined&per_page=25")
    assert _names(table) == ["p2", "p1"]
    assert [(a.label, a.value) for a in table.active] == [
        ("Staff", "Staff"),
        ("Name contains", "“p”"),
    ]
    staff, name = table.active
    assert staff.remove_url == f"{PATH}?name=p&sort=-joined&per_page=25"
    assert name.remove_url == f"{PATH}?staff=True&sort=-joined&per_page=25"
    assert table.clear_url == f"{PATH}?sort=-joined&per_page=25"
    assert table.hidden == [("sort", "-joined")]  # what the filter form carries besides


def test_a_filter_value_that_is_not_a_choice_is_left_out_and_named(people) -> None:
    table = _table("staff=maybe&joined_from=2026-13-40&name=p1")
    assert _names(table) == ["p1"]  # the valid filter still applies
    assert table.problems == [
        "Staff: Select a valid choice. maybe is not one of the available choices. "
        "This filter is left out.",
        "Joined from: Enter a valid date. This filter is left out.",
    ]
    assert [a.label for a in table.active] == ["Name contains"]
    assert "staff" not in table.values


def test_a_date_filter_and_a_filter_with_a_default(people) -> None:
    assert _names(_table("joined_from=2026-01-08&per_page=25")) == ["p7", "p8"]
    every = _table("active=all&joined_from=2026-01-08")
    assert _names(every) == ["p7", "p8"] and every.total == 3
    assert [(a.label, a.value) for a in every.active] == [
        ("Joined from", "2026-01-08"),
        ("Accounts", "Every account"),
    ]
    assert every.active[1].remove_url == f"{PATH}?joined_from=2026-01-08"
    assert _table("active=yes").active == []  # the default is not a filter to remove


def test_a_costly_sort_waits_for_a_narrower_list(people) -> None:
    wide = _table("sort=-email")
    assert _names(wide) == ["p0", "p1"]  # nine rows, over the three the spec allows
    assert wide.problems == [
        "Sorting by E-mail works on 3 rows or fewer: narrow the list with the filters. "
        "Sorted by Name meanwhile."
    ]
    assert wide.headers[0].aria_sort == "ascending" and wide.headers[2].aria_sort == ""
    assert wide.page_links[1].url == f"{PATH}?sort=-email&page=2"  # the wish is kept
    narrow = _table("sort=-email&staff=True")
    assert _names(narrow) == ["p1", "p2"] and narrow.problems == []
    assert narrow.headers[2].aria_sort == "descending"


def test_page_links_keep_the_state_and_leave_gaps(people) -> None:
    table = _table("per_page=1&page=5&active=all&sort=joined")
    assert _names(table) == ["p4"]
    numbers = [link.number for link in table.page_links]
    assert numbers == [1, 0, 3, 4, 5, 6, 7, 0, 10]
    current = next(link for link in table.page_links if link.current)
    assert current.number == 5
    assert table.page_links[0].url == f"{PATH}?active=all&sort=joined&per_page=1"
    assert table.next_url == f"{PATH}?active=all&sort=joined&per_page=1&page=6"
    assert table.previous_url == f"{PATH}?active=all&sort=joined&per_page=1&page=4"
    assert (table.start_text, table.end_text, table.total_text) == ("5", "5", "10")
    assert _table().page_links[0].url == PATH  # page 1 of the default view: the bare path


def test_one_page_has_no_page_links_and_an_empty_table_shows_nothing(people) -> None:
    assert _table("per_page=25").page_links == []
    empty = _table("name=nobody&page=3")
    assert empty.rows == [] and empty.total == 0 and empty.page == 1
    assert (empty.start, empty.end) == (0, 0)


def test_three_queries_whatever_the_page(people, django_assert_num_queries) -> None:
    for query in ("", "page=4&sort=-joined", "staff=True&name=p", "per_page=200"):
        with django_assert_num_queries(3):
            _table(query)


def test_large_numbers_are_grouped_as_the_reader_writes_them(people, settings) -> None:
    table = _table()
    table.total = 1234567
    assert table.total_text == "1,234,567"
    from django.utils import translation

    with translation.override("zh-hans"):
        assert table.total_text == "1234567"


def test_htmx_asks_for_the_table_alone_by_targeting_it() -> None:
    class Details:
        def __init__(self, target: str | None) -> None:
            self.target = target

        def __bool__(self) -> bool:
            return True

    assert tables.wants_table(Details("people"), PEOPLE)  # type: ignore[arg-type]
    assert not tables.wants_table(Details("matrix"), PEOPLE)  # type: ignore[arg-type]
    assert not tables.wants_table(False, PEOPLE)  # type: ignore[arg-type]
