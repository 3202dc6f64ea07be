"""Request bodies for the API: JSON that nests too deeply is bad input, not a server error."""

from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH_MESSAGE = "JSON parse error - the document nests too deeply"


class DepthSafeJSONParser(JSONParser):
    """DRF's JSON parser, answering 400 for a document whose nesting exhausts the decoder's
    recursion (a 10,000-deep array raised RecursionError: a 500)."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(MAX_DEPTH_MESSAGE) from None
