"""The wording of the error pages both UIs show: a heading and a sentence for each HTTP
status. Each UI adds the statuses only it has a page for."""

from __future__ import annotations

from collections.abc import Mapping

PAGES = {
    400: ("That request could not be used",
          "Something in the address or the form was not understood. Please go back and try "
          "again."),
    404: ("Page not found",
          "We can't find that page. It may have moved, or the address may be mistyped."),
    405: ("That did not work", "That page cannot be used this way."),
    413: ("Too much at once", "That request was too large. Please try with less."),
    429: ("Too many requests", "Too many requests in a short time. Please wait a moment."),
    500: ("Something went wrong",
          "Something went wrong on our side. It has been noted; please try again in a moment."),
}


def wording(status: int, pages: Mapping[int, tuple[str, str]] = PAGES) -> tuple[str, str]:
    """(heading, sentence) for `status`; a status without its own wording takes 500's if it is
    a server error, else 400's."""
    return pages.get(status, pages[500] if status >= 500 else pages[400])
