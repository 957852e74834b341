"""Reading a user's text file with bounds: at most ``max_bytes`` are read (a larger file is refused
from its size, before it is read), the encoding is found (strict UTF-8 first; charset-normalizer for
UTF-16 / UTF-32 and binary files), the text is handed on as UTF-8 bytes with ``\\n`` line ends, and
its first line (the CSV header) is found within a bounded prefix.

Why strict UTF-8 first and Windows-1252 as the fallback, not charset-normalizer's guess for
single-byte code pages: a CSV holds few letters, and on short samples the statistical guess is often
another code page (a Windows-1252 "Aé;1,5" was read as cp775 "Aķ", a Latin-1 one as cp1250); UTF-8 is
decided exactly by a strict decoder, and Western spreadsheets write Windows-1252. The encoding used
is named in the dataset's description, so a wrong guess is visible.
"""
from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import NamedTuple

from ..base.limits import format_bytes
from ..base.validation import file_fix_action

#: Largest file read (bytes). A larger file is refused from its size, before anything is read.
MAX_FILE_BYTES = 64 * 2**20
#: Longest first line (the CSV header) in bytes: 10,000 columns of names of 100 characters fit.
MAX_HEADER_CHARS = 1_000_000
#: Longest path accepted (Linux's PATH_MAX is 4096; real paths are far shorter).
MAX_PATH_LENGTH = 1024
_DETECT_BYTES = 64 * 1024  # even: a UTF-16 head cut at an odd byte is not recognised
_CHUNK = 4 * 2**20  # transcoding works on chunks, so no whole-file str is ever built

_UNICODE_LABELS = {"utf_16": "UTF-16", "utf_16_le": "UTF-16", "utf_16_be": "UTF-16",
                   "utf_32": "UTF-32", "utf_32_le": "UTF-32", "utf_32_be": "UTF-32"}


class Text(NamedTuple):  # numpydoc ignore=PR02
    """A file's text as UTF-8 bytes with ``\\n`` line ends, its display name and the encoding it was read in.

    Parameters
    ----------
    name : str
        Display name of the file.
    data : bytes
        The text as UTF-8 with ``\\n`` line ends.
    encoding : str
        Label of the encoding it was read in.
    """
    name: str
    data: bytes
    encoding: str


def source_name(path_or_buffer, default: str) -> str:
    """A file's display name: the last part of its path or of its ``name`` attribute, else ``default``.

    Parameters
    ----------
    path_or_buffer : str, path-like, bytes or file-like
        The file.
    default : str
        Name used when the file has none.

    Returns
    -------
    str
        The name, at most 200 characters.
    """
    name = path_or_buffer if isinstance(path_or_buffer, (str, os.PathLike)) else getattr(path_or_buffer, "name", None)
    return Path(str(name)).name[:200] if name else default


def too_large(name: str, size: int | None, max_bytes: int) -> ValueError:
    """The error refusing a file over ``max_bytes``, naming its size when known.

    Parameters
    ----------
    name : str
        Display name of the file.
    size : int or None
        Its size in bytes, if known.
    max_bytes : int
        The limit.

    Returns
    -------
    ValueError
        The error, to be raised by the caller.
    """
    size_text = f"{format_bytes(size)}" if size is not None else f"more than {format_bytes(max_bytes)}"
    return ValueError(f"The file {name!r} is {size_text}; at most {format_bytes(max_bytes)} are read here. Upload "
                      "a sample of its rows (e.g. the first 100,000 lines) or fewer columns.")


def _buffer_size(buffer) -> int | None:
    """Size of a seekable buffer without reading or copying it (None if unknown). Not getbuffer():
    on a BytesIO made from bytes it copies the whole content (the buffer stops sharing the bytes)."""
    try:
        here = buffer.tell()
        size = buffer.seek(0, os.SEEK_END)
        buffer.seek(here)
        return size
    except (AttributeError, OSError, ValueError):
        return None


def read_bytes(path_or_buffer, name: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The raw bytes of a path, a bytes object, or a binary / text file-like object: at most
    ``max_bytes`` (a larger file is refused from its size, or after reading ``max_bytes + 1``).

    Parameters
    ----------
    path_or_buffer : str, path-like, bytes or file-like
        The file.
    name : str
        Display name for error messages.
    max_bytes : int, default MAX_FILE_BYTES
        Most bytes read.

    Returns
    -------
    bytes
        The file's bytes.
    """
    if isinstance(path_or_buffer, (bytes, bytearray, memoryview)):
        if len(path_or_buffer) > max_bytes:
            raise too_large(name, len(path_or_buffer), max_bytes)
        return bytes(path_or_buffer)
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = str(path_or_buffer)
        if len(path) > MAX_PATH_LENGTH:
            raise ValueError(f"The file path is {len(path):,} characters long, more than the {MAX_PATH_LENGTH:,} allowed.")
        try:
            with open(path, "rb") as f:
                raw = f.read(max_bytes + 1)
        except (OSError, ValueError) as exc:
            raise ValueError(f"The file {path[:200]!r} could not be read: {getattr(exc, 'strerror', None) or exc}.") from None
    else:
        size = _buffer_size(path_or_buffer)
        if size is not None and size > max_bytes:
            raise too_large(name, size, max_bytes)
        if hasattr(path_or_buffer, "seek"):
            path_or_buffer.seek(0)
        raw = path_or_buffer.read(max_bytes + 1)
        raw = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
    if len(raw) > max_bytes:
        raise too_large(name, None, max_bytes)
    return raw


def _is_utf8(raw: bytes) -> bool:
    """Strictly valid UTF-8, checked in chunks (no whole-file str)."""
    if raw.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(raw)
    try:
        for start in range(0, len(raw), _CHUNK):
            decoder.decode(view[start:start + _CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def detect_encoding(raw: bytes, name: str) -> tuple[str, str]:
    """(Python codec, label) of a text file; refuses a binary file (see the module's note).

    Parameters
    ----------
    raw : bytes
        The file's bytes.
    name : str
        Display name for error messages.

    Returns
    -------
    tuple of (str, str)
        The Python codec and its label.
    """
    if raw.startswith(codecs.BOM_UTF8) and _is_utf8(raw):
        return "utf-8-sig", "UTF-8 (with BOM)"
    if b"\x00" not in raw[:_DETECT_BYTES] and _is_utf8(raw):  # NUL bytes: UTF-16/32 without BOM, or binary
        return "utf-8", "UTF-8"
    from charset_normalizer import from_bytes  # imported here: only files that are not plain UTF-8 need it

    head = raw[:_DETECT_BYTES]
    best = from_bytes(head).best()
    codec = best.encoding if best is not None else None
    if codec in _UNICODE_LABELS:
        return codec, _UNICODE_LABELS[codec]
    if b"\x00" in head:
        raise ValueError(f"{name!r} looks like a binary file (it contains NUL bytes), not text. Upload a CSV or "
                         "LIBSVM text file.")
    try:
        raw.decode("cp1252")  # only 5 bytes are undefined in Windows-1252; Latin-1 decodes any byte
        return "cp1252", "Windows-1252"
    except UnicodeDecodeError:
        return "latin-1", "Latin-1"


def to_utf8(raw: bytes, codec: str, name: str) -> bytes:
    """The text re-encoded as UTF-8, chunk by chunk (at most ~2x the input for single-byte code pages).

    Parameters
    ----------
    raw : bytes
        The file's bytes.
    codec : str
        Python codec they are in.
    name : str
        Display name for error messages.

    Returns
    -------
    bytes
        The text as UTF-8, without a BOM.
    """
    if codec == "utf-8":
        return raw
    if codec == "utf-8-sig":
        return raw[len(codecs.BOM_UTF8):]
    decoder = codecs.getincrementaldecoder(codec)("strict")
    view = memoryview(raw)
    try:
        parts = [decoder.decode(view[start:start + _CHUNK]).encode("utf-8") for start in range(0, len(raw), _CHUNK)]
        parts.append(decoder.decode(b"", final=True).encode("utf-8"))
    except UnicodeDecodeError:
        label = _UNICODE_LABELS.get(codec, codec)
        raise ValueError(f"{name!r} starts like a {label} text file but is not valid {label}; save it as UTF-8 (in a "
                         f"spreadsheet: 'CSV UTF-8') and {file_fix_action()}.") from None
    return b"".join(parts)


def read_text(path_or_buffer, name: str, max_bytes: int = MAX_FILE_BYTES) -> Text:
    """The file as UTF-8 bytes with ``\\n`` line ends (CR-only files, as old Mac spreadsheets write, converted).

    Parameters
    ----------
    path_or_buffer : str, path-like, bytes or file-like
        The file.
    name : str
        Display name for error messages.
    max_bytes : int, default MAX_FILE_BYTES
        Most bytes read.

    Returns
    -------
    Text
        The file's text.
    """
    raw = read_bytes(path_or_buffer, name, max_bytes)
    codec, label = detect_encoding(raw, name)
    data = to_utf8(raw, codec, name)
    del raw
    if b"\n" not in data and b"\r" in data:
        data = data.replace(b"\r", b"\n")
    return Text(name, data, label)


def first_line_end(data: bytes, name: str, limit: int = MAX_HEADER_CHARS) -> int:
    """Index of the first ``\\n`` (or the end of a one-line file), looked for in the first ``limit``
    bytes only: a longer first line is refused without reading further.

    Parameters
    ----------
    data : bytes
        The text.
    name : str
        Display name for error messages.
    limit : int, default MAX_HEADER_CHARS
        Longest first line accepted.

    Returns
    -------
    int
        Index of the first line end.
    """
    end = data.find(b"\n", 0, limit + 1)
    if end >= 0:
        return end
    if len(data) > limit:
        raise ValueError(f"The first line of {name!r} (the header) is longer than {limit:,} characters; a header "
                         f"of at most {limit:,} characters is read. Check that the file is a CSV with a header row "
                         "and line breaks.")
    return len(data)


def count_lines(data: bytes, start: int = 0) -> int:
    """Lines in ``data[start:]`` (a last line without ``\\n`` counts), blank lines included: an upper
    bound of the rows, counted in C without splitting.

    Parameters
    ----------
    data : bytes
        The text.
    start : int, default 0
        Offset to count from.

    Returns
    -------
    int
        The number of lines.
    """
    if start >= len(data):
        return 0
    return data.count(b"\n", start) + (not data.endswith(b"\n"))


def decode_text(raw: bytes, name: str = "the file") -> tuple[str, str]:
    """(text, encoding) of a text file's bytes, with the detection of :func:`read_text`.

    Parameters
    ----------
    raw : bytes
        The file's bytes.
    name : str, default "the file"
        Display name for error messages.

    Returns
    -------
    tuple of (str, str)
        The decoded text and its encoding label.
    """
    codec, label = detect_encoding(bytes(raw), name)
    return to_utf8(bytes(raw), codec, name).decode("utf-8"), label
