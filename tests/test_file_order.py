"""The record of seconds per test file that orders the files among xdist's workers
(tests/support/ordering.py)."""

import json

from tests.support import ordering


def test_writing_the_record_keeps_the_suites_this_checkout_did_not_run(tmp_path, monkeypatch):
    committed = tmp_path / "tests" / "file_seconds.json"
    committed.parent.mkdir()
    committed.write_text(json.dumps({
        f"{ordering.KEY}/plain": {"tests/test_a.py": 4},
        f"{ordering.KEY}/postgres": {"tests/test_a.py": 9}}))
    cache = tmp_path / ".pytest_cache" / "v" / ordering.KEY
    cache.mkdir(parents=True)
    (cache / "plain").write_text(json.dumps({"tests/test_a.py": 6.4, "tests/test_gone.py": 2}))
    (tmp_path / "tests" / "test_a.py").write_text("")
    monkeypatch.setattr(ordering, "ROOT", tmp_path)
    monkeypatch.setattr(ordering, "COMMITTED", committed)
    ordering.write_committed()
    assert json.loads(committed.read_text()) == {
        f"{ordering.KEY}/plain": {"tests/test_a.py": 6},
        f"{ordering.KEY}/postgres": {"tests/test_a.py": 9}}
