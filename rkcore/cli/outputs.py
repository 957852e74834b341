"""Where the ``rkcore`` command writes, checked before any work, written so that nothing is lost or clobbered.

Before a study starts, :func:`check_outputs` refuses (a one-line ValueError) any output that

- names an input (same resolved path, or the same file under another name: a hard link, a symlink),
  whatever ``--overwrite`` says;
- is not a regular file: a FIFO (writing would block forever), a device, a folder, a socket;
- exists (a file or a symlink) and ``--overwrite`` was not given;
- appears twice among the outputs (``--raw`` equal to ``--out``, or to its sibling tables);
- sits in a folder that is missing or where a file cannot be created (checked by creating one).

:func:`write_atomically` then writes every output to a temporary file in its own folder and moves them
into place with ``os.replace`` only when all are written: a crash or a full disk leaves the old files
(and the inputs) as they were, never half a table. A symlink given as output with ``--overwrite`` is
replaced by the file, never written through to its target.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Iterable


MOVIELENS_FILES = ("u.data", "u.user", "u.item")


def sibling(path: Path, tag: str) -> Path:
    """``results.csv`` -> ``results.<tag>.csv`` (same format).

    Parameters
    ----------
    path : Path
        The main output file.
    tag : str
        The name inserted before the suffix.

    Returns
    -------
    Path
        The sibling file in the same folder.
    """
    return path.with_name(f"{path.stem}.{tag}{path.suffix}")


def provenance_path(path: Path) -> Path:
    """``results.csv`` -> ``results.provenance.json``.

    Parameters
    ----------
    path : Path
        The main output file.

    Returns
    -------
    Path
        The provenance record's file in the same folder.
    """
    return path.with_name(f"{path.stem}.provenance.json")


def input_files(data: str | None) -> list[Path]:
    """The files a ``--data`` value reads: the file, or a MovieLens folder's u.data, u.user and u.item (every
    file of another folder); none for builtin:KEY.

    Parameters
    ----------
    data : str or None
        The ``--data`` value (None or empty for no data).

    Returns
    -------
    list[Path]
        The input files read.
    """
    if not data or data.startswith("builtin:"):
        return []
    path = Path(data)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file())
        return [p for p in files if p.name in MOVIELENS_FILES] or files
    return [path]


def check_input(data: str) -> None:
    """Refuse a ``--data`` path that is neither builtin:KEY, a folder nor a regular file (a FIFO would hang).

    Parameters
    ----------
    data : str
        The ``--data`` value; a ValueError is raised when it is missing or not a file or folder.
    """
    if data.startswith("builtin:"):
        return
    try:
        mode = os.stat(data).st_mode
    except OSError:
        raise ValueError(f"--data {data!r} does not exist: give builtin:KEY, a MovieLens folder or a file.") from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ValueError(f"--data {data!r} is not a regular file or folder (a pipe or device is not read).")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(outputs: Iterable[Path], inputs: Iterable[Path], overwrite: bool) -> list[Path]:
    """Every output path, checked as the module docstring says; returns them (ValueError on the first refusal).

    Parameters
    ----------
    outputs : Iterable[Path]
        The files the command will write.
    inputs : Iterable[Path]
        The files it reads (see :func:`input_files`), never to be overwritten.
    overwrite : bool
        Whether existing outputs may be replaced (``--overwrite``).

    Returns
    -------
    list[Path]
        The outputs, in the given order.
    """
    outputs, inputs = list(outputs), list(inputs)
    seen: dict[Path, Path] = {}
    for out in outputs:
        resolved = out.resolve()
        if resolved in seen:
            raise ValueError(f"{out} is written twice (also as {seen[resolved]}); give distinct output names.")
        seen[resolved] = out
        for source in inputs:
            if resolved == source.resolve() or _same_file(out, source):
                raise ValueError(f"output {out} is the input file {source}; refusing to overwrite the data.")
        _check_target(out, overwrite)
    for folder in {p.parent for p in outputs}:
        _check_folder(folder)
    return outputs


def _check_target(out: Path, overwrite: bool) -> None:
    try:
        info = os.lstat(out)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ValueError(f"cannot use output {out}: {exc.strerror}.") from None
    if stat.S_ISLNK(info.st_mode):
        target = os.stat(out).st_mode if out.exists() else stat.S_IFREG
        if not stat.S_ISREG(target):
            raise ValueError(f"output {out} is a link to something that is not a regular file; refusing it.")
    elif not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a pipe, device or socket"
        raise ValueError(f"output {out} is {kind}, not a regular file; refusing to write there.")
    if not overwrite:
        raise ValueError(f"output {out} exists; pass --overwrite to replace it.")


def _check_folder(folder: Path) -> None:
    if not folder.is_dir():
        raise ValueError(f"folder {str(folder)!r} of the output file does not exist.")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".rkcore-check-"):
            pass
    except OSError as exc:
        raise ValueError(f"cannot write in folder {str(folder)!r}: {exc.strerror or exc}.") from None


def write_atomically(writers: dict[Path, Callable[[Path], object]]) -> list[Path]:
    """Call each ``writer(temporary_path)``, then move every temporary file onto its path (``os.replace``).

    Temporary files live in the target's folder (so the move is atomic) and are removed on any failure;
    an OSError is raised as a one-line ValueError naming the file.

    Parameters
    ----------
    writers : dict[Path, Callable[[Path], object]]
        Target path -> function writing the content to the temporary path it is given.

    Returns
    -------
    list[Path]
        The target paths written.
    """
    staged: list[tuple[Path, str]] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for path, write in writers.items():
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            os.close(handle)
            staged.append((path, temporary))
            write(Path(temporary))
            os.chmod(temporary, 0o666 & ~umask)  # mkstemp's 0600 would make results private to the writer
        for path, temporary in staged:
            os.replace(temporary, path)
    except OSError as exc:
        raise ValueError(f"could not write {getattr(exc, 'filename', None) or 'the results'}: "
                         f"{exc.strerror or exc}.") from None
    finally:
        for _, temporary in staged:
            if os.path.exists(temporary):
                os.unlink(temporary)
    return list(writers)


def sha256(path: Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB chunks).

    Parameters
    ----------
    path : Path
        The file to hash.
    chunk : int, default 1 << 20
        Bytes read at a time.

    Returns
    -------
    str
        The hexadecimal digest.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()
