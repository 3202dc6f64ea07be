"""Small line charts of the CI trends as SVG written on the server (no script, no download),
and the same figures as a table.

`pass_rate_line` draws one candidate's pass rate over its last runs, 0 to 100 %, newest run
at the right edge so that the charts of several candidates line up run for run from the
right. The chart is an image whose title and label say what it shows in words; each point
carries its own title (run and figure). `figures_table` writes the figures for those who do
not see the chart. Both are written here rather than in a template: a page holds up to fifty
of them, and every text inside is escaped where it is written.
"""

from collections.abc import Sequence
from html import escape

from django.utils.safestring import SafeString, mark_safe

WIDTH = 240
HEIGHT = 64
LEFT, RIGHT, TOP, BOTTOM = 30, WIDTH - 6, 6, HEIGHT - 8
LINE_COLOUR = "#1f5fbf"
GRID_COLOUR = "#d0d7de"
LABEL_COLOUR = "#57606a"
FONT = 'font-family="system-ui, Noto Sans, Noto Sans CJK SC, DejaVu Sans, sans-serif"'


def _y(percent: float) -> float:
    return BOTTOM - (BOTTOM - TOP) * max(0.0, min(percent, 100.0)) / 100


def pass_rate_line(points: Sequence[tuple[str, float]], *, slots: int, title: str) -> SafeString:
    """`points`: (what the point is, pass rate in percent), oldest first, drawn on the last
    places of `slots` places (at least as many as points). `title` says what the chart shows
    and is its accessible name."""
    slots = max(slots, len(points), 2)
    step = (RIGHT - LEFT) / (slots - 1)
    first = slots - len(points)
    body = [f'<g stroke="{GRID_COLOUR}" stroke-width="0.6">']
    body += [
        f'<line x1="{LEFT}" x2="{RIGHT}" y1="{_y(g):.1f}" y2="{_y(g):.1f}"/>' for g in (0, 50, 100)
    ]
    body.append(f'</g><g text-anchor="end" fill="{LABEL_COLOUR}">')
    body += [f'<text x="{LEFT - 3}" y="{_y(g) + 3:.0f}">{g}%</text>' for g in (0, 50, 100)]
    body.append("</g>")
    at = [(LEFT + step * (first + i), _y(percent)) for i, (_label, percent) in enumerate(points)]
    if len(at) > 1:
        line = " ".join(f"{x:.0f},{y:.0f}" for x, y in at)
        body.append(
            f'<polyline points="{line}" fill="none" stroke="{LINE_COLOUR}" stroke-width="1.6"/>'
        )
    body.append(f'<g fill="{LINE_COLOUR}">')
    body += [
        f'<circle cx="{x:.0f}" cy="{y:.0f}" r="2.2"><title>{escape(label)}: {percent:.1f}%'
        "</title></circle>"
        for (x, y), (label, percent) in zip(at, points, strict=True)
    ]
    body.append("</g>")
    return mark_safe(  # noqa: S308 - every text inside is escaped where it is written
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart spark" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" {FONT} font-size="8"><title>{escape(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def figures_table(
    caption: str, headers: Sequence[str], rows: Sequence[Sequence[object]]
) -> SafeString:
    """A chart's figures as a table (class `figures`): each row names its point in the first
    column (a row header), the figures follow (the stylesheet aligns them as numbers)."""
    head = "".join(
        f'<th scope="col"{' class="num"' if i else ""}>{escape(h)}</th>'
        for i, h in enumerate(headers)
    )
    body = "".join(
        f'<tr><th scope="row">{escape(str(row[0]))}</th>'
        + "".join(f"<td>{escape(str(value))}</td>" for value in row[1:])
        + "</tr>"
        for row in rows
    )
    return mark_safe(  # noqa: S308 - every text inside is escaped where it is written
        f'<table class="list compact figures"><caption class="visually-hidden">'
        f"{escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )
