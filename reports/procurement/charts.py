"""The cost charts as SVG written on the server: the same markup serves the page and the PDF
(no script, no download). Each chart takes plain figures and a function that writes an amount
for its reader; every label is escaped. Colours are fixed per category and per series, and
every chart carries a title and a text alternative so that it reads without colour too.

* `stacked_years`: one bar per year, stacked by category;
* `cumulative`: cumulative cost over the years per candidate, the line at expected and a band
  from low to high;
* `tornado_chart`: a candidate's total with each input at its low and its high.
"""

from collections.abc import Callable, Sequence
from decimal import Decimal
from html import escape

from django.utils.safestring import SafeString, mark_safe

Amount = Decimal | float
Writer = Callable[[Decimal], str]

CATEGORY_COLOURS = {
    "licence": "#3b6fb6",
    "support": "#6aa2d8",
    "capacity": "#2f8f6b",
    "implementation": "#d9822b",
    "training": "#e6b34a",
    "operations": "#8a63b8",
    "exit": "#c2504b",
    "other": "#8b949e",
}
SERIES_COLOURS = ["#3b6fb6", "#d9822b", "#2f8f6b", "#c2504b", "#8a63b8", "#1f9aa8", "#a66b2f"]
BASELINE_COLOUR = "#5c6670"
FONT = 'font-family="Noto Sans CJK SC, Noto Sans, DejaVu Sans, sans-serif"'
WIDTH = 640


def _top(value: float) -> float:
    """A round number at or above `value` for an axis."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 4, 6, 8, 10):  # quarters of each read as round numbers
        if value <= step * magnitude:
            return step * magnitude
    return 10.0 * magnitude


def _svg(height: int, title: str, body: list[str]) -> SafeString:
    return mark_safe(  # noqa: S308 - every text inside is escaped where it is written
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" role="img" {FONT} font-size="11"><title>{escape(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def _axis(top: float, left: int, right: int, y0: int, y1: int, write: Writer) -> list[str]:
    """Horizontal grid lines at quarters of `top`, labelled on the left."""
    out = []
    for quarter in range(5):
        value = top * quarter / 4
        y = y0 - (y0 - y1) * quarter / 4
        out.append(
            f'<line x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d0d7de" '
            'stroke-width="0.6"/>'
            f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#57606a">'
            f"{escape(write(Decimal(str(value))))}</text>"
        )
    return out


def _text_width(label: str) -> int:
    """About how wide `label` is at the charts' size (wide characters count double)."""
    return sum(12 if ord(ch) > 0x2E80 else 7 for ch in label)


def _legend(entries: Sequence[tuple[str, str]], y: int) -> tuple[list[str], int]:
    """The legend from `y` down, wrapped to the width; and where it ends."""
    out, x = [], 60
    for label, colour in entries:
        width = 24 + _text_width(label)
        if x + width > WIDTH and x > 60:
            y, x = y + 16, 60
        out.append(
            f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14}" y="{y}" fill="#1d232b">{escape(label)}</text>'
        )
        x += width
    return out, y + 8


def stacked_years(
    rows: Sequence[tuple[str, str, Sequence[Amount]]], title: str, year_label: str, write: Writer
) -> SafeString:
    """`rows`: (category key, label, amount per year), stacked in the order given."""
    years = max((len(amounts) for _k, _l, amounts in rows), default=0)
    totals = [sum(float(r[2][i]) for r in rows) for i in range(years)]
    top = _top(max(totals, default=0))
    left, right, y0, y1 = 70, WIDTH - 10, 190, 14
    slot = (right - left) / max(years, 1)
    body = _axis(top, left, right, y0, y1, write)
    for i in range(years):
        x, base = left + slot * i + slot * 0.2, float(y0)
        for key, label, amounts in rows:
            height = (y0 - y1) * float(amounts[i]) / top
            if height <= 0:
                continue
            base -= height
            tip = f"{year_label % {'year': i + 1}} · {label}: {write(Decimal(str(amounts[i])))}"
            body.append(
                f'<rect x="{x:.1f}" y="{base:.1f}" width="{slot * 0.6:.1f}" height="{height:.1f}" '
                f'fill="{CATEGORY_COLOURS.get(key, "#8b949e")}"><title>'
                f"{escape(tip)}"
                "</title></rect>"
            )
        body.append(
            f'<text x="{x + slot * 0.3:.1f}" y="{y0 + 14}" text-anchor="middle" fill="#57606a">'
            f"{i + 1}</text>"
        )
    legend, bottom = _legend(
        [(label, CATEGORY_COLOURS.get(key, "#8b949e")) for key, label, _a in rows], 228
    )
    return _svg(bottom, title, body + legend)


def cumulative(
    series: Sequence[tuple[str, Sequence[tuple[Amount, Amount, Amount]]]],
    title: str,
    write: Writer,
    baseline: tuple[str, Sequence[tuple[Amount, Amount, Amount]]] | None = None,
) -> SafeString:
    """`series`: (name, cumulative (low, expected, high) per year); the baseline dashed."""
    every = [*series, *([baseline] if baseline else [])]
    years = max((len(points) for _n, points in every), default=0)
    top = _top(max((float(p[2]) for _n, points in every for p in points), default=0))
    left, right, y0, y1 = 70, WIDTH - 10, 190, 14
    step = (right - left) / max(years - 1, 1)

    def at(i: int, value: Amount) -> str:
        return f"{left + step * i:.1f},{y0 - (y0 - y1) * float(value) / top:.1f}"

    body = _axis(top, left, right, y0, y1, write)
    legend = []
    for n, (name, points) in enumerate(every):
        dashed = baseline is not None and n == len(every) - 1
        colour = BASELINE_COLOUR if dashed else SERIES_COLOURS[n % len(SERIES_COLOURS)]
        band = [at(i, p[2]) for i, p in enumerate(points)] + [
            at(i, p[0]) for i, p in reversed(list(enumerate(points)))
        ]
        line = " ".join(at(i, p[1]) for i, p in enumerate(points))
        body.append(
            f'<polygon points="{" ".join(band)}" fill="{colour}" fill-opacity="0.12"/>'
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"'
            f"{' stroke-dasharray="5 3"' if dashed else ''}><title>{escape(name)}: "
            f"{escape(write(Decimal(str(points[-1][1]))) if points else '')}</title></polyline>"
        )
        legend.append((name, colour))
    for i in range(years):
        body.append(
            f'<text x="{left + step * i:.1f}" y="{y0 + 14}" text-anchor="middle" '
            f'fill="#57606a">{i + 1}</text>'
        )
    drawn, bottom = _legend(legend, 228)
    return _svg(bottom, title, body + drawn)


def tornado_chart(
    base: Amount, swings: Sequence[tuple[str, Amount, Amount, bool]], title: str, write: Writer
) -> SafeString:
    """`swings`: (input, total at its low, total at its high, changes the ranking), widest
    first; bars run from the low total to the high total around the expected one."""
    low = min([float(base), *(float(s[1]) for s in swings)])
    high = max([float(base), *(float(s[2]) for s in swings)])
    span = (high - low) or 1.0
    left, right, row = 230, WIDTH - 90, 20
    height = 30 + row * len(swings) + 10

    def x(value: Amount) -> float:
        return left + (right - left) * (float(value) - low) / span

    body = [
        f'<line x1="{x(base):.1f}" x2="{x(base):.1f}" y1="16" y2="{height - 6}" '
        'stroke="#1d232b" stroke-width="1"/>',
        f'<text x="{x(base):.1f}" y="12" text-anchor="middle" fill="#57606a">'
        f"{escape(write(Decimal(str(base))))}</text>",
    ]
    for n, (label, at_low, at_high, changes) in enumerate(swings):
        y = 22 + row * n
        name = label if len(label) <= 34 else label[:33] + "…"
        colour = "#c2504b" if changes else "#3b6fb6"
        body.append(
            f'<text x="{left - 6}" y="{y + 12}" text-anchor="end" fill="#1d232b">'
            f"{escape(name)}{' *' if changes else ''}</text>"
            f'<rect x="{x(at_low):.1f}" y="{y + 2}" width="{max(x(at_high) - x(at_low), 1):.1f}" '
            f'height="{row - 6}" fill="{colour}" fill-opacity="0.8"><title>{escape(label)}: '
            f"{escape(write(Decimal(str(at_low))))} – {escape(write(Decimal(str(at_high))))}"
            "</title></rect>"
            f'<text x="{x(at_high) + 4:.1f}" y="{y + 12}" fill="#57606a" font-size="10">'
            f"{escape(write(Decimal(str(float(at_high) - float(at_low)))))}</text>"
        )
    return _svg(height, title, body)
