"""Byte parity between a skills folder and its mirror copy (the seed's embedded vs committed skills).

Each skill's tree digest (domain ``skill``) must equal its mirror's. When two differ, the files are
compared one by one so the problem names each file that differs, is missing or is extra, not just the
skill.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import InputError
from evalkit.skilleval.digest import DOMAINS, file_sha256, tree_digest
from evalkit.skilleval.registry_tree import RegistryTree, list_tree, shown


def compare_mirror(tree: RegistryTree, mirror: Path) -> None:
    """Add a problem to ``tree`` for every skill or file of ``mirror`` that is not a byte-identical copy.

    Args:
        tree: the listed skills folder (problems are added to it).
        mirror: the mirror folder, holding the same ``<skill>/`` folders.
    """
    if not mirror.is_dir():
        tree.problems.append(InputError("mirror is not a folder", file=shown(mirror)))
        return
    copy = list_tree(mirror, holder="a skills mirror", hardlinks=False)
    ours = {name for name in tree.children("") if name in tree.folders}
    theirs = {name for name in copy.children("") if name in copy.folders}
    for name in sorted(ours - theirs):
        copy.problems.append(InputError(f"skill {name!r} is missing from the mirror (it is in {tree.root})",
                                        file=shown(mirror / name)))
    for name in sorted(theirs - ours):
        copy.problems.append(InputError(f"skill {name!r} is in the mirror but not in {tree.root}",
                                        file=shown(mirror / name)))
    for name in sorted(ours & theirs):
        if any(rel.startswith(f"{name}/") or rel == name for rel in tree.refused | copy.refused):
            continue  # refused entries are reported; the digests cannot be compared
        skill_digest = tree_digest(tree.root / name, DOMAINS["skill"])
        if skill_digest != tree_digest(mirror / name, DOMAINS["skill"]):
            _explain(tree, copy, name)
    tree.problems.extend(copy.problems)


def _explain(tree: RegistryTree, copy: RegistryTree, name: str) -> None:
    """One problem per file of skill ``name`` that differs between the tree and its mirror."""
    ours = {rel for rel in tree.files if rel.startswith(f"{name}/")}
    theirs = {rel for rel in copy.files if rel.startswith(f"{name}/")}
    for rel in sorted(ours | theirs):
        if rel not in theirs:
            copy.problems.append(InputError(f"missing from the mirror (present in {tree.root})",
                                            file=shown(copy.path(rel))))
        elif rel not in ours:
            copy.problems.append(InputError(f"extra in the mirror (absent from {tree.root})",
                                            file=shown(copy.path(rel))))
        else:
            mine, other = file_sha256(tree.path(rel)), file_sha256(copy.path(rel))
            if mine != other:
                copy.problems.append(InputError(f"bytes differ from {shown(tree.path(rel))} (sha256 {other[:12]} "
                                                f"in the mirror, {mine[:12]} in the skills)",
                                                file=shown(copy.path(rel))))
