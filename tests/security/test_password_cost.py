"""Passwords are hashed at werkzeug's default scrypt cost in every process but the test
suite's own (tests/conftest.py lowers it there, for speed): checked in a fresh process."""

from __future__ import annotations

import subprocess
import sys

from werkzeug.security import check_password_hash


def test_a_fresh_process_hashes_at_the_default_scrypt_cost():
    code = ("from service.org import accounts; "
            "print(accounts.hash_password('correct horse battery staple'))")
    stored = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    method = stored.split("$", 1)[0]
    assert method == "scrypt:32768:8:1"  # werkzeug 3's default: n=2**15, r=8, p=1
    assert check_password_hash(stored, "correct horse battery staple")
    assert not check_password_hash(stored, "correct horse battery stapler")
