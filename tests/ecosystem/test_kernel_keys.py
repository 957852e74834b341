"""Kernel parameters live in the registry (issue 36): no code outside the registry and the kernels room
compares a kernel key. Code asks the kernel's entry instead (``KERNELS[name].takes_family``,
``spec.entry.is_polynomial``, ``entry.uses_gamma``, ...), so a kernel added with one registry entry is
handled everywhere without a hand edit.

A kernel-key comparison is a string literal that is a key of :data:`rkcore.registry.KERNELS` (or one of the
registry's groups of keys, ``POLYNOMIAL_KERNELS``, ``ITEMSET_KERNELS``, ``ORDERED_KERNELS``) compared with
``==``, ``!=``, ``in`` or ``not in``, a subscript by such a literal (``KERNELS["rbf"]``), or a dict literal keyed
by kernel keys and looked up (``{"rbf": ...}[kernel]``).

Not counted: comparisons with an itemset family's ``kind`` (``family.kind == "dot"``). Those name the shape of
an :class:`rkcore.kernels.itemsets.ItemsetFamily` (the kernels room's ``FAMILY_KINDS``, which also has "custom"
and "cross_fields"), on which the maps and the variance formulas dispatch their closed forms; they are not
the user's kernel choice.
"""
from __future__ import annotations

import ast
from pathlib import Path

from rkcore.registry import KERNELS
from tests.conftest import REPO

#: The registry and the kernels room: where kernel keys are defined and may be compared.
HOME = ("rkcore/registry/", "rkcore/kernels/")
#: Files other helpers are rewriting while this test lands (pages becoming views, issue 36); their comparisons
#: are listed, not yet refused. The lead empties this allow-list at merge, once the views ask the registry.
BEING_REWRITTEN: tuple[str, ...] = ()  # emptied at the merge: every page and view asks the registry
OWNED_VIEWS = ("rkcore/views/settings.py", "rkcore/views/gram.py", "rkcore/views/__init__.py",
               "rkcore/views/base.py")
GROUPS = {"POLYNOMIAL_KERNELS", "ITEMSET_KERNELS", "ORDERED_KERNELS"}


def _keys_in(node: ast.AST, keys: set[str]) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [k for e in node.elts for k in _keys_in(e, keys)]
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return [name] if name in GROUPS else []


def _is_family_kind(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "kind") or (isinstance(node, ast.Attribute)
                                                                    and node.attr == "kind")


def _comparisons(tree: ast.AST, keys: set[str]):
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:]):
                if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) or _is_family_kind(left):
                    continue
                found = _keys_in(right, keys)
                if isinstance(op, (ast.Eq, ast.NotEq)) and not _is_family_kind(right):
                    found += _keys_in(left, keys)
                if found:
                    yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.Subscript):
            keyed_dict = isinstance(node.value, ast.Dict) and any(_keys_in(k, keys) for k in node.value.keys if k)
            if keyed_dict or (isinstance(node.slice, ast.Constant) and _keys_in(node.slice, keys)):
                yield node.lineno, ast.unparse(node)


def kernel_key_comparisons(root: Path = REPO, keys: set[str] | None = None) -> list[str]:
    """``file:line: code`` of every kernel-key comparison in rkcore, rkapp and pages outside the registry and
    the kernels room."""
    keys = set(KERNELS) if keys is None else keys
    found = []
    for file in sorted([*(root / "rkcore").rglob("*.py"), *(root / "rkapp").rglob("*.py"),
                        *(root / "pages").glob("*.py")]):
        where = file.relative_to(root).as_posix()
        if where.startswith(HOME):
            continue
        for line, code in _comparisons(ast.parse(file.read_text(encoding="utf-8")), keys):
            found.append(f"{where}:{line}: {code[:100]}")
    return sorted(set(found))


def _allowed(entry: str) -> bool:
    where = entry.split(":")[0]
    return where.startswith(BEING_REWRITTEN) and where not in OWNED_VIEWS


def test_no_kernel_key_comparison_outside_the_registry():
    refused = [e for e in kernel_key_comparisons() if not _allowed(e)]
    assert refused == [], "ask the kernel's registry entry instead:\n" + "\n".join(refused)


def test_the_allow_list_holds_only_files_being_rewritten():
    listed = [e for e in kernel_key_comparisons() if _allowed(e)]
    assert all(e.startswith(("pages/", "rkcore/views/")) for e in listed)


def test_the_scan_sees_each_form_of_comparison(tmp_path):
    (tmp_path / "rkcore" / "studies").mkdir(parents=True)
    (tmp_path / "rkcore" / "kernels").mkdir()
    (tmp_path / "rkapp").mkdir()
    (tmp_path / "rkcore" / "studies" / "probe.py").write_text(
        "a = kernel == 'rbf'\nb = spec.name in ('anova', 'up_to')\nc = 'itemset' != view.kernel\n"
        "d = name not in POLYNOMIAL_KERNELS\ne = KERNELS['dot']\nf = {'rbf': 1, 'anova': 2}[kernel]\n"
        "g = family.kind == 'dot'\nh = kind in ('anova', 'dot')\ni = mode == 'fast'\nj = fn(kernel='rbf')\n")
    (tmp_path / "rkcore" / "kernels" / "home.py").write_text("a = kernel == 'rbf'\n")
    found = kernel_key_comparisons(tmp_path, {"rbf", "anova", "up_to", "itemset", "dot"})
    assert [e.split(":")[1] for e in found] == ["1", "2", "3", "4", "5", "6"], found
