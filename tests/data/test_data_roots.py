"""A sealed file system for MovieLens (issue 26, item 2).

The app reads MovieLens only under the data roots whoever starts the server sets (RKCORE_DATA_ROOTS).
Every path that is not a readable folder under them gets one identical answer (it exists or not, is
outside, is a file, lacks permission, escapes through a link or ".."); no error quotes a file's
contents; every file is read with bounds on bytes and lines (a 1 GB u.data is refused unread).
"""
from __future__ import annotations

import os
import time

import pytest

from rkcore.data import movielens as ml
from rkcore.data import datasets as ds
from tests.conftest import error_texts

GRAM = "pages/1_Gram_matrices.py"


@pytest.fixture
def root(tmp_path, movielens):
    """A data root holding a MovieLens folder ``ml-100k``, and outside it a secret folder and file."""
    base = tmp_path / "root"
    movielens.write(base / "ml-100k")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("PASSWORD=hunter2\n")
    movielens.write(tmp_path / "outside" / "ml-copy")  # a real MovieLens folder, but outside the roots
    return base


def roots_of(base) -> tuple[str, ...]:
    return (os.path.realpath(base),)


def refusal(path, roots) -> str:
    with pytest.raises(ValueError) as info:
        ds.load_movielens(str(path), roots=roots)
    return str(info.value)


def test_every_path_outside_the_roots_gets_one_identical_answer(root, tmp_path):
    roots = roots_of(root)
    os.symlink(tmp_path / "outside", root / "link_out")  # a link inside the root that leads out
    (root / "a_file").write_text("x")
    probes = [
        "/root/.ssh", "/etc", "/nonexistent/folder", "/proc/1/root", "/proc/self/cwd",  # exists / missing / no permission
        str(tmp_path / "outside"), str(tmp_path / "outside" / "ml-copy"),  # a real MovieLens folder outside
        str(root / "link_out" / "ml-copy"), str(root / ".." / "outside" / "ml-copy"),  # escapes by link and by ..
        "../outside/ml-copy", "link_out/ml-copy",  # relative to the root
        str(root / "missing"), "missing", str(root / "a_file"),  # inside: missing, not a folder
        "bad\x00path", "a" * 10_000,
    ]
    answers = {probe: refusal(probe, roots) for probe in probes}
    assert set(answers.values()) == {ml.folder_refusal(roots)}, answers
    message = ml.folder_refusal(roots)
    assert message == (f"No MovieLens 100K folder can be read at that path. This server reads MovieLens only from "
                       f"folders under its data roots ({roots[0]}); enter such a folder that holds u.data, u.user "
                       "and u.item.")


def test_folders_under_the_roots_load_by_absolute_or_relative_path(root):
    roots = roots_of(root)
    by_name = ds.load_movielens("ml-100k", roots=roots)
    by_path = ds.load_movielens(str(root / "ml-100k"), roots=roots)
    assert by_name.X.shape == by_path.X.shape == (20, ds.ML_N_FEATURES)


def test_no_roots_means_no_server_folder(root):
    assert refusal(root / "ml-100k", ()) == ml.folder_refusal(())
    assert "none are set" in ml.folder_refusal(()) and ml.DATA_ROOTS_ENV in ml.folder_refusal(())


def test_data_roots_from_the_environment(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert ml.data_roots({ml.DATA_ROOTS_ENV: f"{a}{os.pathsep}{b}{os.pathsep}{tmp_path / 'missing'}"}) == (
        os.path.realpath(a), os.path.realpath(b))
    assert ml.data_roots({ml.DATA_ROOTS_ENV: ""}) == ()  # set but empty: nothing
    monkeypatch.chdir(tmp_path)
    assert ml.data_roots({}) == ()  # unset, and no ./data
    (tmp_path / "data").mkdir()
    assert ml.data_roots({}) == (os.path.realpath(tmp_path / "data"),)  # the documented default


def test_a_file_linked_out_of_the_roots_is_refused_without_its_contents(root, tmp_path):
    folder = root / "ml-100k"
    (folder / "u.data").unlink()
    os.symlink("/proc/self/environ", folder / "u.data")
    message = refusal(folder, roots_of(root))
    assert message == ml._file_refusal("u.data")
    (folder / "u.data").unlink()
    os.symlink(tmp_path / "outside" / "secret.txt", folder / "u.data")
    assert refusal(folder, roots_of(root)) == ml._file_refusal("u.data")


def test_a_file_hard_linked_from_outside_the_roots_is_refused(root, tmp_path):
    """Issue 37, finding 8: a hard link inside a root to a file outside it looks like the file itself; files
    with more than one link are refused when sealed, with the same fixed answer (nothing of the file shown).
    The library's own unsealed calls still read them."""
    folder = root / "ml-100k"
    outside = tmp_path / "outside" / "ml-copy" / "u.data"  # a valid MovieLens file, but outside the roots
    (folder / "u.data").unlink()
    os.link(outside, folder / "u.data")
    assert refusal(folder, roots_of(root)) == ml._file_refusal("u.data")
    assert ds.load_movielens(str(folder), roots=None).X.shape[0] > 0  # a script on its own machine: not sealed
    (folder / "u.data").unlink()
    (folder / "u.data").write_bytes(outside.read_bytes())  # a copy (one link) is read
    assert ds.load_movielens(str(folder), roots=roots_of(root)).X.shape[0] > 0


def test_a_wrong_format_file_is_named_by_line_never_quoted(root):
    folder = root / "ml-100k"
    (folder / "u.data").write_text("PASSWORD=hunter2 x y z\n")
    message = refusal(folder, roots_of(root))
    assert message == "u.data line 1 is not 'user item rating timestamp' (four tab-separated integers)."
    good = (folder / "u.user").read_text()
    (folder / "u.data").write_text("1\t1\t5\t881250949\n2\t2\t3\tSECRET\n")
    assert refusal(folder, roots_of(root)).startswith("u.data line 2 is not")
    (folder / "u.data").write_text("1\t1\t5\t881250949\n")
    (folder / "u.user").write_text(good + "6|30|M|SECRET_JOB|12345\n")
    message = refusal(folder, roots_of(root))
    assert message.startswith("u.user line 6 has an unknown occupation") and "SECRET" not in message
    (folder / "u.user").write_text(good)
    (folder / "u.data").write_text("99\t1\t5\t881250949\n")
    message = refusal(folder, roots_of(root))
    assert "user ids that are not in u.user" in message and "99" not in message


def test_a_1GB_file_is_refused_unread_within_2_seconds(root):
    folder = root / "ml-100k"
    with open(folder / "u.data", "r+b") as f:
        f.truncate(2**30)  # a sparse 1 GB file: no disk used
    start = time.perf_counter()
    message = refusal(folder, roots_of(root))
    assert time.perf_counter() - start < 2
    assert message.startswith("MovieLens file 'u.data' is larger than 32.0 MB")


def test_a_file_reporting_size_0_is_bounded_while_reading(root, monkeypatch):
    monkeypatch.setattr(ml, "MAX_MOVIELENS_BYTES", 100)
    (root / "ml-100k" / "u.data").write_text("1\t1\t5\t881250949\n" * 20)  # 400 bytes
    assert "is larger than" in refusal(root / "ml-100k", roots_of(root))
    monkeypatch.setattr(ml, "MAX_MOVIELENS_BYTES", 32 * 2**20)
    monkeypatch.setattr(ml, "MAX_MOVIELENS_ROWS", 10)
    assert "has 20 lines, more than the 10 read" in refusal(root / "ml-100k", roots_of(root))


def test_a_fifo_is_refused_without_blocking(root):
    folder = root / "ml-100k"
    (folder / "u.data").unlink()
    os.mkfifo(folder / "u.data")
    assert refusal(folder, roots_of(root)) == ml._file_refusal("u.data")


def test_the_command_line_gives_a_clear_error_for_a_1GB_file(root, capsys):
    from rkcore.cli import main

    with open(root / "ml-100k" / "u.data", "r+b") as f:
        f.truncate(2**30)
    assert main(["table1", "--data", str(root / "ml-100k"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "rkcore table1: error: MovieLens file 'u.data' is larger than 32.0 MB" in err and "Traceback" not in err


def test_the_app_answers_probes_alike_and_reads_under_its_roots(run_page, root, monkeypatch):
    monkeypatch.setenv(ml.DATA_ROOTS_ENV, str(root))
    answers = []
    for probe in ("/root/.ssh", "/nonexistent", "/proc/1/root", str(root / ".." / "outside" / "ml-copy")):
        at = run_page(GRAM, ds="movielens", mlpath=probe, n=20, D=32)
        assert not at.exception
        answers.append([e for e in error_texts(at) if "MovieLens" in e])
    assert all(a == answers[0] for a in answers) and len(answers[0]) == 1, answers
    assert answers[0][0].endswith(ml.folder_refusal(roots_of(root)))
    at = run_page(GRAM, ds="movielens", mlpath="ml-100k", n=20, D=32)
    assert not at.exception and not at.error, error_texts(at)
    assert len(at.metric) == 4
    assert any(os.path.realpath(root) in c.value.replace("\\", "") for c in at.sidebar.caption)
