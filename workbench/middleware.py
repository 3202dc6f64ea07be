"""Optional request statistics for benchmarks and profiling (WORKBENCH_QUERY_STATS=true).

Adds `Server-Timing: app;dur=<ms>` and `X-Query-Count` to every response. Off by default.
"""

import time
from collections.abc import Callable
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponse


class QueryStatsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        count = 0

        def counter(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            nonlocal count
            count += 1
            return execute(sql, params, many, context)

        start = time.perf_counter()
        with connections["default"].execute_wrapper(counter):
            response = self.get_response(request)
        response["Server-Timing"] = f"app;dur={(time.perf_counter() - start) * 1000:.1f}"
        response["X-Query-Count"] = str(count)
        return response
