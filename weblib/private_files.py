"""Files only their owner may read (mode 600): signing keys and the demo key."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, atomically replacing any old one."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def instance_secret(instance_path: str, file_name: str) -> str:
    """A random key kept in the instance folder, created on first use. Several workers
    starting at once agree on the first one written: it appears whole, by a hard link that
    fails for every later writer."""
    folder = Path(instance_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name
    if not path.exists():
        candidate = folder / f".{file_name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        descriptor = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        try:
            os.link(candidate, path)  # fails if another process won the race
        except FileExistsError:
            pass
        finally:
            candidate.unlink(missing_ok=True)
    return path.read_text(encoding="utf-8").strip()
