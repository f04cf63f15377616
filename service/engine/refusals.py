"""What the engine refuses, in its own words: the HTTP layer (service/bodies/errors.py) answers an
Invalid with a 400 and a Missing with a 404, the message as the engine put it."""

from __future__ import annotations


class Refused(Exception):  # noqa: N818 — a refusal, said to the caller as a sentence
    def __init__(self, message: str | list[str]):
        super().__init__(message)
        self.message = message


class Invalid(Refused):
    """The call asks for something the engine cannot do (a filter or a sort it does not take,
    a tag that is not the project's)."""


class Missing(Refused):
    """What the call names is not there (the project, a query)."""
