"""Markdown from users rendered to HTML that is safe to put in a page or a PDF.

Markdown allows raw HTML, so the output is cleaned with an allow-list: no scripts, no event
handlers, no styles, and links only to http, https and mailto.
"""

import markdown as markdown_lib
import nh3
from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "strong",
    "em",
    "b",
    "i",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "del",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = {"http", "https", "mailto"}


def render_markdown(text: str) -> SafeString:
    html = markdown_lib.markdown(text or "", extensions=["tables", "fenced_code", "sane_lists"])
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return mark_safe(clean)  # noqa: S308 - cleaned by nh3 with an allow-list just above
