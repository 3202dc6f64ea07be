"""Walk the URL resolver so that tests cover every view, including ones added later."""

from collections.abc import Iterator
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver


@dataclass(frozen=True)
class Route:
    name: str
    pattern: str
    converters: dict[str, str]


def iter_routes(
    resolver: URLResolver | None = None, prefix: str = "", namespace: str = ""
) -> Iterator[Route]:
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            ns = entry.namespace or namespace
            if ns and namespace and entry.namespace:
                ns = f"{namespace}:{entry.namespace}"
            yield from iter_routes(entry, prefix + str(entry.pattern), ns)
        elif isinstance(entry, URLPattern):
            converters = {
                name: type(conv).__name__
                for name, conv in getattr(entry.pattern, "converters", {}).items()
            }
            name = f"{namespace}:{entry.name}" if namespace and entry.name else entry.name or ""
            yield Route(name=name, pattern=prefix + str(entry.pattern), converters=converters)
