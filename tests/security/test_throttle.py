"""weblib.throttle, which both sign-in forms use: limits per key, in a moving window."""

from __future__ import annotations

import pytest

from weblib.throttle import Throttle


def test_each_key_has_its_own_count_and_a_refusal_says_how_long_to_wait():
    throttle = Throttle("memory://", [("2/minute", ("test-signin",))])
    assert [throttle.attempt("10.0.0.1"), throttle.attempt("10.0.0.1")] == [0, 0]
    assert 1 <= throttle.attempt("10.0.0.1") <= 60
    assert throttle.attempt("10.0.0.2") == 0
    # No address at all counts as one address, "unknown".
    assert [throttle.attempt(None), throttle.attempt("")] == [0, 0]
    assert throttle.attempt("unknown") > 0


def test_an_attempt_one_limit_refuses_is_counted_by_none():
    throttle = Throttle("memory://", [("3/minute", ("test", "addr")),
                                      ("1/minute", ("test", "email"))])
    assert throttle.attempt("10.0.0.1", "ann") == 0
    assert throttle.attempt("10.0.0.1", "ann") > 0  # the email's limit
    # The refused attempt was not counted for the address either: it has used 1 of its 3.
    assert [throttle.attempt("10.0.0.1", "bob"), throttle.attempt("10.0.0.1", "cid")] == [0, 0]
    assert throttle.attempt("10.0.0.1", "dan") > 0  # the address's limit
    with pytest.raises(TypeError):
        throttle.attempt("10.0.0.1")
