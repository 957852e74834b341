"""The rkcore command never destroys data and never answers with a traceback (issue 27 item 11), answers
--help/--version without loading the numeric stack, and records what produced a result (issue 30 item 5)."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from rkcore.cli import main
from rkcore.cli import names
from rkcore.cli.outputs import check_outputs, write_atomically
from tests.conftest import REPO

FAST = ["--normalize", "none", "--methods", "rk", "--D", "8", "--trials", "1", "--C-grid", "1",
        "--blas-threads", "1"]


@pytest.fixture
def data_csv(tmp_path) -> Path:
    rows = "\n".join(f"{(i * 37 % 101) / 101:.3f},{(i * 53 % 97) / 97:.3f},{i % 2}" for i in range(100))
    path = tmp_path / "my.csv"
    path.write_text("a,b,target\n" + rows + "\n")
    return path


def accuracy(data: Path, *extra: str) -> list[str]:
    return ["accuracy", "--data", str(data), "--target", "target", *FAST, *extra]


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging (a FIFO opened for writing blocks until a reader comes)."""
    def stop(*_):
        raise TimeoutError(f"no answer within {seconds} s")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def refused_before_work(capsys, argv, message) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert message in err and "Traceback" not in err
    assert err.count("\n") == 1 and out == ""  # one line; the study never ran (it prints its table)


# ----------------------------------------------------------------------------- the caller's files
@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_the_input_is_never_an_output(data_csv, capsys, overwrite):
    before = data_csv.read_bytes()
    refused_before_work(capsys, accuracy(data_csv, "--out", str(data_csv), *overwrite), "is the input file")
    # the same file under another name: a symlink and a hard link
    (data_csv.parent / "alias.csv").symlink_to(data_csv)
    os.link(data_csv, data_csv.parent / "hard.csv")
    for alias in ("alias.csv", "hard.csv"):
        refused_before_work(capsys, accuracy(data_csv, "--out", str(data_csv.parent / alias), *overwrite),
                            "is the input file")
    assert data_csv.read_bytes() == before


def test_existing_outputs_and_siblings_need_overwrite(data_csv, tmp_path, capsys):
    out = tmp_path / "results.csv"
    for existing in (out, tmp_path / "results.validation.csv", tmp_path / "results.provenance.json"):
        existing.write_text("keep me")
        refused_before_work(capsys, accuracy(data_csv, "--out", str(out), "--quiet"), "exists; pass --overwrite")
        assert existing.read_text() == "keep me"
        existing.unlink()
    out.write_text("old")
    assert main(accuracy(data_csv, "--out", str(out), "--quiet", "--overwrite")) == 0
    assert pd.read_csv(out)["method"].tolist() == ["rk"]
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # not mkstemp's private 0600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_symlinked_output_is_replaced_not_written_through(data_csv, tmp_path, capsys):
    target = tmp_path / "precious.csv"
    target.write_text("precious")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    refused_before_work(capsys, accuracy(data_csv, "--out", str(link), "--quiet"), "exists; pass --overwrite")
    assert main(accuracy(data_csv, "--out", str(link), "--quiet", "--overwrite")) == 0
    assert target.read_text() == "precious" and not link.is_symlink()


def test_a_fifo_is_refused_at_once(data_csv, tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with deadline(60):
        refused_before_work(capsys, accuracy(data_csv, "--out", str(fifo), "--overwrite"), "not a regular file")
        refused_before_work(capsys, ["accuracy", "--data", str(fifo), "--target", "target"], "not a regular file")


def test_an_unwritable_folder_is_refused_before_the_study(data_csv, capsys):
    refused_before_work(capsys, accuracy(data_csv, "--out", "/proc/results.csv"), "cannot write in folder")
    refused_before_work(capsys, accuracy(data_csv, "--out", "/no/such/folder/r.csv"), "does not exist")


def test_table1_writes_every_table_and_never_into_its_data(tmp_path, capsys):
    """One progress section per kernel, --raw beside --out, checksums of every MovieLens file read; an output
    named as a file of the data folder is refused."""
    from tests.data.conftest import write_movielens

    folder = tmp_path / "ml"
    folder.mkdir()
    write_movielens(folder)
    argv = ["table1", "--data", str(folder), "--n", "40", "--trials", "2", "--multiples", "2",
            "--kernels", "anova2,all_subsets"]
    assert main(argv + ["--out", str(tmp_path / "t.csv"), "--raw", str(tmp_path / "raw.csv")]) == 0
    out, err = capsys.readouterr()
    assert "(a) Second-order ANOVA kernel: 100.0%" in err and "(c) All-subsets kernel: 100.0%" in err
    assert set(pd.read_csv(tmp_path / "t.csv")["kernel_key"]) == {"anova2", "all_subsets"}
    assert set(pd.read_csv(tmp_path / "raw.csv")["kernel_key"]) == {"anova2", "all_subsets"}
    record = json.loads((tmp_path / "t.provenance.json").read_text())
    assert {Path(p).name for p in record["inputs"]} >= {"u.data", "u.user", "u.item"}
    before = (folder / "u.data").read_bytes()
    (tmp_path / "ratings.csv").symlink_to(folder / "u.data")
    refused_before_work(capsys, argv + ["--out", str(tmp_path / "new.csv"), "--raw", str(tmp_path / "ratings.csv"),
                                        "--overwrite"], "is the input file")
    assert (folder / "u.data").read_bytes() == before


def test_raw_and_out_must_differ(tmp_path, capsys):
    out = str(tmp_path / "t.csv")
    refused_before_work(capsys, ["table1", "--data", str(tmp_path), "--out", out, "--raw", out], "written twice")


def test_writes_are_all_or_nothing(tmp_path):
    """A failure while writing (disk full, a crash) leaves the old files as they were and no temporary files."""
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("old a")

    def fail(path):
        raise OSError(28, "No space left on device", str(path))

    with pytest.raises(ValueError, match="No space left"):
        write_atomically({first: lambda p: p.write_text("new a"), second: fail})
    assert first.read_text() == "old a" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]
    with pytest.raises(ValueError, match="not a regular file"):
        check_outputs([tmp_path], [], overwrite=True)  # a folder


# ----------------------------------------------------------------------------- every number bounded
@pytest.mark.parametrize("argv,message", [
    (["accuracy", "--data", "builtin:interactions", "--D", "infd"], "--D entries must give a number"),
    (["accuracy", "--data", "builtin:interactions", "--D", "1e300"], "--D entries must give a number"),
    (["accuracy", "--data", "builtin:interactions", "--D", "2**40"], "--D entries must be integers"),
    (["accuracy", "--data", "builtin:interactions", "--n-train", "1e308"], "must be a finite number"),
    (["accuracy", "--data", "builtin:interactions", "--n-train", "nan"], "must be a finite number"),
    (["accuracy", "--data", "builtin:interactions", "--n-train", "10.5"], "whole number"),
    (["accuracy", "--data", "builtin:interactions", "--seed", str(2**40)], "--seed: must be an integer from 0"),
    (["accuracy", "--data", "builtin:interactions", "--seed", "2**40"], "expected an integer"),
    (["accuracy", "--data", "builtin:interactions", "--seed", str(2**32 - 1), "--trials", "2"], "random_state"),
    (["accuracy", "--data", "builtin:interactions", "--trials", "1000000000"], "--trials: must be an integer"),
    (["accuracy", "--data", "builtin:interactions", "--n-samples", "1" + "0" * 400], "--n-samples: must be"),
    (["accuracy", "--data", "builtin:interactions", "--C-grid", "inf"], "--C-grid: must be a finite number"),
    (["accuracy", "--data", "builtin:interactions", "--param", "fm.max_iter=" + "9" * 300], "longer than 200"),
    (["timing", "--d", "100000000"], "--d: must be an integer from 1 to"),
    (["timing", "--repeats", "1000000000"], "--repeats: must be an integer from 1 to"),
    (["timing", "--d", "1000000", "--D", "100000"], "would need about"),
    (["timing", "--seed", str(2**32 - 2)], "exceeds the largest seed"),
    (["table1", "--data", ".", "--multiples", "0"], "--multiples: must be an integer"),
    (["table1", "--data", ".", "--n-jobs", "100000"], "--n-jobs: must be an integer"),
])
def test_every_number_is_bounded_with_a_one_line_error(argv, message, capsys):
    refused_before_work(capsys, argv, message)


def test_split_of_every_n_is_accepted(capsys):
    """135 = 15 (mod 20): the default split (0.5, 0.1, 0.4) asked for 136 rows (issue 27 item 10)."""
    argv = ["accuracy", "--data", "builtin:interactions", "--n-samples", "135", *FAST, "--quiet"]
    assert main(argv) == 0
    assert "train/val/test = 67/14/54" in capsys.readouterr().out  # 13.5 + a hair (binary 0.1) rounds up


# ----------------------------------------------------------------------------- quiet, provenance, help
def test_quiet_is_quiet_and_provenance_has_checksums_and_blas(data_csv, tmp_path, capfd):
    out = tmp_path / "fm.csv"
    argv = ["accuracy", "--data", str(data_csv), "--target", "target", "--normalize", "none", "--methods", "fm",
            "--trials", "1", "--C-grid", "1", "--param", "fm.max_iter=1", "--blas-threads", "1", "--out", str(out)]
    with warnings.catch_warnings(record=True) as loud:  # as Python shows them on stderr outside pytest
        warnings.simplefilter("always")
        assert main(argv) == 0
        assert main(argv + ["--quiet", "--overwrite"]) == 0
    shown = [w.category.__name__ for w in loud]
    assert shown.count("ConvergenceWarning") == 1  # the first run's: what --quiet has to silence
    assert "done" in capfd.readouterr().err
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        assert main(argv + ["--quiet", "--overwrite"]) == 0
    assert quiet == [] and capfd.readouterr().err == ""
    record = json.loads((tmp_path / "fm.provenance.json").read_text())
    assert record["inputs"] == {str(data_csv): {"sha256": hashlib.sha256(data_csv.read_bytes()).hexdigest(),
                                                "bytes": data_csv.stat().st_size}}
    assert record["blas"] and all(isinstance(lib["num_threads"], int) for lib in record["blas"])
    assert any(lib["user_api"] == "blas" for lib in record["blas"])


def test_help_and_version_load_no_numeric_stack():
    """``rkcore --help``, ``--version`` and ``table1 --help`` answer at once: nothing of numpy, pandas, scikit-learn
    or the engines is imported. The help of ``timing`` and ``accuracy`` lists the registry's names, so it imports
    the registry, and only when it is printed."""
    code = ("import sys\nfrom rkcore.cli import main\n"
            "heavy = lambda: sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas', 'sklearn', "
            "'scipy') or m in ('rkcore.studies.accuracy', 'rkcore.registry', 'rkcore.kernels'))\n"
            "for argv in (['--version'], ['--help'], ['table1', '--help']):\n"
            "    assert main(argv) == 0\n"
            "print('HEAVY', heavy())\n"
            "for argv in (['accuracy', '--help'], ['timing', '--help']):\n"
            "    assert main(argv) == 0\n"
            "print('AFTER', 'rkcore.registry' in heavy())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout and "AFTER True" in done.stdout
    assert "builtin:breast_cancer" in done.stdout and "examples:" in done.stdout and "2d,4d,8d,16d)" in done.stdout


def test_the_names_in_the_help_are_the_registry_s(capsys):
    from rkcore import registry
    from rkcore.data import datasets
    from rkcore.studies import accuracy, table1, timing

    assert names.map_keys() == tuple(registry.MAPS)
    assert names.accuracy_kernels() == ("anova", "all_subsets", "dot", "up_to")  # the itemset kernel needs a family
    assert names.method_keys() == tuple(registry.METHODS)
    assert names.DEFAULT_C_GRID == accuracy.DEFAULT_C_GRID and names.SELECTION_METRICS == accuracy.SELECTION_METRICS
    assert tuple(names.BUILTIN_DATASETS) == tuple(datasets.BUILTIN)
    assert names.TABLE1_KERNELS == tuple(table1.TABLE1_KERNELS) and names.TABLE1_MULTIPLES == table1.MULTIPLES
    assert names.FIGURE1 is timing.FIGURE1
    assert set(names.NORMALIZATIONS) <= set(datasets.NORMALIZATIONS)
    assert main(["timing", "--help"]) == 0
    assert "map keys out of " + ", ".join(registry.MAPS) in " ".join(capsys.readouterr().out.split())


def test_engines_never_import_the_command_line():
    """One-way layers: rkcore.cli imports the engines; no engine (nor a figure) imports rkcore.cli, and the
    accuracy figure takes its method table from the registry, not from the engine."""
    registry = [f"registry/{path.stem}" for path in sorted((REPO / "rkcore" / "registry").glob("*.py"))]
    assert len(registry) >= 4, registry
    for module in ("studies/accuracy", "studies/timing", "studies/table1", *registry, "figures/accuracy"):
        text = (REPO / "rkcore" / f"{module}.py").read_text()
        assert "from .cli" not in text and "rkcore.cli" not in text and "from ..cli" not in text \
            and "from ...cli" not in text, module
    figure = (REPO / "rkcore" / "figures" / "accuracy.py").read_text()
    assert "from ..studies" not in figure and "from ..registry import get_method" in figure
