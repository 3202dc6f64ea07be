"""Sortable, filterable, paginated list tables whose whole state lives in the query string.

A list page declares its table once (`TableSpec`): the columns, which of them sort and on what,
and the filters, each with the lookup its value is given to. `table_for` reads `?sort=`,
`?page=`, `?per_page=` and the filters from the request's query, applies them to the page's
queryset and returns what templates/includes/table_*.html draw: header links with aria-sort,
the filter form with the active filters and a link that clears them, "showing 51-100 of
1,234", page links and the rows-per-page choice. So a link or a reload shows the same view.

A value the table cannot use (an unknown column, a page past the end, a filter value that is
not one of the choices) never fails the page: the table falls back and says what it did. The
page costs three queries (the count, the page's keys, its rows) plus the queries of its
queryset's prefetches; a sort that must order every row (`Column.costly`) is only honoured up to
`TableSpec.costly_rows` rows, above which the table keeps its default order and says so.
"""

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlencode

from django import forms
from django.db.models import F, QuerySet
from django.db.models.expressions import BaseExpression, OrderBy
from django.http import HttpResponse, QueryDict
from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_htmx.middleware import HtmxDetails

if TYPE_CHECKING:
    from django.utils.functional import _StrPromise as Promise
else:
    from django.utils.functional import Promise

SORT, PAGE, PER_PAGE = "sort", "page", "per_page"
PER_PAGE_CHOICES = (25, 50, 100, 200)
MAX_PER_PAGE = PER_PAGE_CHOICES[-1]
# Pages linked on either side of the current one; the first and last are always linked.
PAGE_WINDOW = 2

type Label = str | Promise
type Ordering = str | F | BaseExpression
type FilterKind = Literal["choice", "date", "number", "text"]
type Choices = Sequence[tuple[str, Label]]


@dataclass(frozen=True)
class Column:
    """A column of a table. `order` holds what an ascending sort orders by (field paths, a
    leading "-" reversing one, or expressions); a column without it does not sort.
    `descending_first`: the first click sorts newest or largest first. `costly`: no index
    serves the sort, so it orders every matching row (see `TableSpec.costly_rows`)."""

    key: str
    label: Label
    order: tuple[Ordering, ...] = ()
    numeric: bool = False
    descending_first: bool = False
    costly: bool = False
    # Empty values last in both directions. Only for columns that may be empty: an index
    # serves a descending sort with empty values first, and would not serve this one.
    nulls_last: bool = False

    @property
    def sortable(self) -> bool:
        return bool(self.order)


@dataclass(frozen=True)
class Filter:
    """A filter of a table, read from `?<key>=`. Its value goes to `lookup` (a queryset
    `filter()` keyword), or to `method(queryset, value)` where one lookup cannot say it.
    Choices are fixed here or given per request (the project's candidates, its people)."""

    key: str
    label: Label
    lookup: str = ""
    kind: FilterKind = "choice"
    choices: Choices = ()
    method: Callable[[QuerySet[Any], Any], QuerySet[Any]] | None = None
    # A choice that applies when the query names none (and is then left out of links).
    default: str = ""

    def form_field(self, choices: Choices) -> forms.Field:
        if self.kind == "date":
            return forms.DateField(
                label=self.label,
                required=False,
                widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
            )
        if self.kind == "number":
            return forms.DecimalField(
                label=self.label, required=False, min_value=0, max_digits=9, decimal_places=2
            )
        if self.kind == "text":
            return forms.CharField(label=self.label, required=False, max_length=100)
        if self.default:
            return forms.ChoiceField(label=self.label, required=False, choices=choices)
        return forms.ChoiceField(
            label=self.label, required=False, choices=[("", gettext_lazy("All")), *choices]
        )

    def apply(self, queryset: QuerySet[Any], value: Any) -> QuerySet[Any]:
        if self.method is not None:
            return self.method(queryset, value)
        return queryset.filter(**{self.lookup: value})


@dataclass(frozen=True)
class TableSpec:
    """A list page's table: its element id (the target of in-place updates), columns,
    default sort (a column key, "-" first for descending) and filters."""

    dom_id: str
    columns: tuple[Column, ...]
    default_sort: str
    filters: tuple[Filter, ...] = ()
    per_page: int = 50
    costly_rows: int = 20_000

    def column(self, key: str) -> Column | None:
        return next((c for c in self.columns if c.key == key and c.sortable), None)


@dataclass(frozen=True)
class Header:
    label: Label
    numeric: bool
    url: str = ""  # empty: the column does not sort
    aria_sort: str = ""  # "ascending" or "descending" on the sorted column only
    indicator: str = ""


@dataclass(frozen=True)
class PageLink:
    number: int  # 0: a gap between the linked pages
    url: str = ""
    current: bool = False


@dataclass(frozen=True)
class ActiveFilter:
    label: Label
    value: str
    remove_url: str


@dataclass
class Table:
    """One page of a table as the templates draw it. `filtered` is the queryset with the
    filters applied and no order, for pages that also sum up what is listed."""

    spec: TableSpec
    rows: list[Any]
    filtered: QuerySet[Any]
    total: int
    page: int
    pages: int
    per_page: int
    sort: str
    headers: list[Header]
    page_links: list[PageLink]
    previous_url: str
    next_url: str
    form: forms.Form
    values: dict[str, Any]  # the filters applied, by key, as their fields cleaned them
    active: list[ActiveFilter]
    clear_url: str
    url: str  # this view's own address: the state shown, defaults and unusable values left out
    problems: list[str] = field(default_factory=list)

    @property
    def dom_id(self) -> str:
        return self.spec.dom_id

    @property
    def start(self) -> int:
        return (self.page - 1) * self.per_page + 1 if self.rows else 0

    @property
    def end(self) -> int:
        return self.start + len(self.rows) - 1 if self.rows else 0

    @property
    def start_text(self) -> str:
        return _number(self.start)

    @property
    def end_text(self) -> str:
        return _number(self.end)

    @property
    def total_text(self) -> str:
        return _number(self.total)

    @property
    def per_page_choices(self) -> list[int]:
        return sorted({*PER_PAGE_CHOICES, self.per_page})

    @property
    def hidden(self) -> list[tuple[str, str]]:
        """What the filter form carries besides its fields: the sort."""
        return [(SORT, self.sort)] if self.sort != self.spec.default_sort else []


@dataclass
class _State:
    """The query string read and checked: what the table shows, and what was wrong."""

    sort: str
    requested_sort: str
    page_text: str
    per_page: int
    per_page_text: str
    values: dict[str, Any]
    raw: dict[str, str]
    form: forms.Form
    problems: list[str]

    def query(self, **changes: str | None) -> dict[str, str]:
        """The state as query parameters (defaults left out), with `changes` (None drops)."""
        params = dict(self.raw)
        if self.requested_sort:
            params[SORT] = self.requested_sort
        if self.per_page_text:
            params[PER_PAGE] = self.per_page_text
        for name, value in changes.items():
            if value is None:
                params.pop(name, None)
            else:
                params[name] = value
        return params


def _number(value: int) -> str:
    """A count as the reader's language groups its digits (1,234 in English)."""
    return formats.number_format(value, force_grouping=True)


def _url(path: str, params: Mapping[str, str]) -> str:
    return f"{path}?{urlencode(params)}" if params else path


def _read_sort(spec: TableSpec, raw: str, problems: list[str]) -> str:
    if not raw:
        return ""
    column = spec.column(raw.removeprefix("-"))
    if column is None:
        default = spec.column(spec.default_sort.removeprefix("-"))
        problems.append(
            _("There is no column “%(sort)s” to sort by: the table is sorted by %(column)s.")
            % {"sort": raw[:60], "column": str(default.label) if default else ""}
        )
        return ""
    return raw if raw != spec.default_sort else ""


def _read_per_page(spec: TableSpec, raw: str, problems: list[str]) -> tuple[int, str]:
    if not raw:
        return spec.per_page, ""
    try:
        number = int(raw)
    except ValueError:
        number = 0
    if number < 1:
        problems.append(
            _("“%(value)s” is not a number of rows per page: showing %(default)s.")
            % {"value": raw[:20], "default": spec.per_page}
        )
        return spec.per_page, ""
    if number > MAX_PER_PAGE:
        problems.append(
            _("At most %(max)s rows are shown per page: showing %(max)s.") % {"max": MAX_PER_PAGE}
        )
        number = MAX_PER_PAGE
    return number, "" if number == spec.per_page else str(number)


def _read_filters(
    spec: TableSpec, data: QueryDict, choices: Mapping[str, Choices], problems: list[str]
) -> tuple[forms.Form, dict[str, Any], dict[str, str]]:
    form = forms.Form(data, auto_id=f"{spec.dom_id}-%s")
    for item in spec.filters:
        form.fields[item.key] = item.form_field(choices.get(item.key, item.choices))
    form.is_valid()
    values: dict[str, Any] = {}
    raw: dict[str, str] = {}
    for item in spec.filters:
        if item.key in form.errors:
            for message in form.errors[item.key]:
                problems.append(
                    _("%(filter)s: %(error)s This filter is left out.")
                    % {"filter": str(item.label), "error": message}
                )
            continue
        value: Any = form.cleaned_data.get(item.key)
        if value in (None, ""):
            value = item.default
        if value in (None, ""):
            continue
        values[item.key] = value
        if value != item.default:
            raw[item.key] = value.isoformat() if isinstance(value, date) else str(value)
    return form, values, raw


def _read(spec: TableSpec, data: QueryDict, choices: Mapping[str, Choices]) -> _State:
    problems: list[str] = []
    requested = _read_sort(spec, data.get(SORT, "").strip(), problems)
    per_page, per_page_text = _read_per_page(spec, data.get(PER_PAGE, "").strip(), problems)
    form, values, raw = _read_filters(spec, data, choices, problems)
    return _State(
        sort=requested or spec.default_sort,
        requested_sort=requested,
        page_text=data.get(PAGE, "").strip(),
        per_page=per_page,
        per_page_text=per_page_text,
        values=values,
        raw=raw,
        form=form,
        problems=problems,
    )


def _ordering(column: Column, descending: bool) -> list[OrderBy]:
    out = []
    for item in column.order:
        reverse = descending
        if isinstance(item, str):
            reverse = reverse != item.startswith("-")
            expression: F | BaseExpression = F(item.removeprefix("-"))
        else:
            expression = item
        nulls_last = True if column.nulls_last else None
        out.append(
            expression.desc(nulls_last=nulls_last)
            if reverse
            else expression.asc(nulls_last=nulls_last)
        )
    # The primary key last keeps the pages apart whatever ties the columns leave.
    out.append(F("pk").desc() if descending else F("pk").asc())
    return out


def _effective_sort(spec: TableSpec, state: _State, total: int) -> tuple[Column, bool]:
    default = spec.column(spec.default_sort.removeprefix("-"))
    assert default is not None, f"{spec.dom_id}: the default sort names no sortable column"
    column = spec.column(state.sort.removeprefix("-")) or default
    if column.costly and total > spec.costly_rows and column is not default:
        state.problems.append(
            _(
                "Sorting by %(column)s works on %(limit)s rows or fewer: narrow the list with "
                "the filters. Sorted by %(default)s meanwhile."
            )
            % {
                "column": str(column.label),
                "limit": _number(spec.costly_rows),
                "default": str(default.label),
            }
        )
        return default, spec.default_sort.startswith("-")
    if column is default and not state.requested_sort:
        return default, spec.default_sort.startswith("-")
    return column, state.sort.startswith("-")


def _read_page(state: _State, pages: int) -> int:
    raw = state.page_text
    if not raw:
        return 1
    try:
        number = int(raw)
    except ValueError:
        number = 0
    if number < 1:
        state.problems.append(
            _("“%(page)s” is not a page number: showing page 1.") % {"page": raw[:20]}
        )
        return 1
    if number > pages:
        state.problems.append(
            _("There is no page %(page)s: showing the last page, %(last)s.")
            % {"page": _number(number), "last": _number(pages)}
        )
        return pages
    return number


def _headers(spec: TableSpec, state: _State, path: str, sorted_by: Column, desc: bool) -> list:
    headers = []
    for column in spec.columns:
        if not column.sortable:
            headers.append(Header(column.label, column.numeric))
            continue
        active = column is sorted_by
        descending = not desc if active else column.descending_first
        value = ("-" if descending else "") + column.key
        sort = None if value == spec.default_sort else value
        headers.append(
            Header(
                column.label,
                column.numeric,
                url=_url(path, state.query(sort=sort, page=None)),
                aria_sort=("descending" if desc else "ascending") if active else "",
                indicator=("▼" if desc else "▲") if active else "",
            )
        )
    return headers


def _page_links(state: _State, path: str, page: int, pages: int) -> list[PageLink]:
    shown = {1, pages, *range(page - PAGE_WINDOW, page + PAGE_WINDOW + 1)}
    links: list[PageLink] = []
    for number in sorted(n for n in shown if 1 <= n <= pages):
        if links and number - links[-1].number > 1:
            links.append(PageLink(0))
        links.append(PageLink(number, _page_url(state, path, number), current=number == page))
    return links if pages > 1 else []


def _page_url(state: _State, path: str, number: int) -> str:
    return _url(path, state.query(page=None if number == 1 else str(number)))


def table_for(
    spec: TableSpec,
    data: QueryDict,
    queryset: QuerySet[Any],
    *,
    path: str,
    choices: Mapping[str, Choices] | None = None,
) -> Table:
    """The page of `queryset` that the query `data` asks for, filtered and sorted as it says,
    or as near as it can be, with what was wrong in `problems`. Three queries: the count, the
    page's keys and its rows (with the queryset's prefetches)."""
    state = _read(spec, data, choices or {})
    filtered = queryset
    for item in spec.filters:
        if item.key in state.values:
            filtered = item.apply(filtered, state.values[item.key])
    total = filtered.count()
    column, descending = _effective_sort(spec, state, total)
    pages = max(1, math.ceil(total / state.per_page))
    page = _read_page(state, pages)
    offset = (page - 1) * state.per_page
    # The page's keys first, joining only what the filters and the sort need, then its rows
    # with everything they show: a page deep in a long list skips keys, not joined rows.
    ordered = filtered.order_by(*_ordering(column, descending)).values_list("pk", flat=True)
    keys = list(ordered[offset : offset + state.per_page])
    found = filtered.in_bulk(keys) if keys else {}
    rows = [found[key] for key in keys if key in found]
    return Table(
        spec=spec,
        rows=rows,
        filtered=filtered,
        total=total,
        page=page,
        pages=pages,
        per_page=state.per_page,
        sort=state.sort,
        headers=_headers(spec, state, path, column, descending),
        page_links=_page_links(state, path, page, pages),
        previous_url=_page_url(state, path, page - 1) if page > 1 else "",
        next_url=_page_url(state, path, page + 1) if page < pages else "",
        form=state.form,
        values=state.values,
        active=[
            ActiveFilter(
                item.label,
                _shown(item, state.values[item.key], choices or {}),
                _url(path, state.query(**{item.key: None, PAGE: None})),
            )
            for item in spec.filters
            if item.key in state.raw
        ],
        clear_url=_url(path, {k: v for k, v in state.query().items() if k in (SORT, PER_PAGE)}),
        url=_page_url(state, path, page),
        problems=state.problems,
    )


def _shown(item: Filter, value: Any, choices: Mapping[str, Choices]) -> str:
    """A filter's value as the reader knows it: a choice's label, a date, a number."""
    if item.kind == "choice":
        labels = dict(choices.get(item.key, item.choices))
        return str(labels.get(value, value))
    if isinstance(value, date):
        return value.isoformat()
    if item.kind == "text":
        return f"“{value}”"
    return str(value)


def wants_table(htmx: HtmxDetails, spec: TableSpec) -> bool:
    """Whether an htmx request asks for the table alone: its element is the target."""
    return bool(htmx) and htmx.target == spec.dom_id


def table_response(response: HttpResponse, table: Table) -> HttpResponse:
    """The table alone for htmx, and the address it shows for the browser's history: the
    state as read, without the form's empty fields or the values it could not use."""
    response["HX-Push-Url"] = table.url
    return response
