"""The members of an uploaded zip archive (a workbook, or Search Console's archive of CSV files),
read only as far as their headers allow, every way an archive can fail said in one sentence.

zipfile never gives more of a member than its header declares and checks its CRC at the end;
what it raises for a damaged archive varies (BadZipFile for a bad CRC or a cut archive,
EOFError or zlib.error for cut data, NotImplementedError for a compression method it does not
read, RuntimeError for an encrypted member). `reading` turns each of them into NotCsv, and
`check_header` refuses before any reading a member that is encrypted, compressed by another
method than deflate, or whose compressed data is larger than its declared size allows (a
member that inflates to gigabytes under a header that declares a kilobyte).
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from .imports import NotCsv

ENCRYPTED = 0x1  # the general purpose flag bit of an encrypted member
METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
# zipfile's answers to a damaged archive or member.
DAMAGED = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, NotImplementedError,
           RuntimeError, ValueError)


def unreadable(what: str = "This zip archive") -> NotCsv:
    """The sentence of an archive (or workbook) that cannot be read."""
    return NotCsv(f"{what} is damaged or cannot be read (a file in it is encrypted, cut "
                  "short, compressed in a way we do not read, or not what its header says): "
                  "save it again, or as CSV, and import that file.")


def opened(binary: BinaryIO, what: str = "This zip archive") -> zipfile.ZipFile:
    """The archive, its directory read; NotCsv when it cannot be."""
    binary.seek(0)
    try:
        return zipfile.ZipFile(binary)
    except DAMAGED:
        raise unreadable(what) from None


def check_header(info: zipfile.ZipInfo, what: str = "This zip archive") -> None:
    """NotCsv for a member that is encrypted, compressed by a method other than deflate, or
    whose compressed data could not inflate to only its declared size (deflate adds at most
    5 bytes a 16 KiB block to data it cannot compress)."""
    if info.flag_bits & ENCRYPTED or info.compress_type not in METHODS:
        raise unreadable(what)
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        raise unreadable(what)
    if info.compress_size > info.file_size + info.file_size // 1000 + 64:
        raise unreadable(what)


@contextmanager
def reading(packed: zipfile.ZipFile, info: zipfile.ZipInfo, what: str = "This zip archive"
            ) -> Iterator[BinaryIO]:
    """A member opened for reading (check_header first); any way it fails while it is read
    within the block is NotCsv."""
    check_header(info, what)
    try:
        with packed.open(info) as member:
            yield member
    except NotCsv:  # the block's own sentence (a NotCsv is a ValueError)
        raise
    except DAMAGED:
        raise unreadable(what) from None
