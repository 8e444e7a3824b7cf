"""What a skill's Markdown refers to, resolved against the files the skill folder really holds.

Two strengths of reference:

- **Strict** (a Markdown link, or a path into ``scripts/``, ``references/`` or ``assets/``): it must
  resolve inside the skill, else it is a problem. Absolute paths and paths leaving the skill are refused.
- **Mentioned** (any other path-like word in prose, code spans or commands: ``FORMS.md``,
  ``tools/fill.py``): it counts when it names a file of the skill (the file is then packaged); when it
  names one only up to letter case (``REFERENCE.md`` for ``reference.md``) it is a problem, since the
  name breaks on a case-sensitive file system (the file meant is still followed); otherwise it is taken for an example name
  (``output.pdf``) and ignored.

Paths resolve from the Markdown file's own folder, then from the skill root (the format's convention).
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

from evalkit.errors import InputError

RESOURCE_FOLDERS = ("scripts", "references", "assets")
"""The Agent Skills format's optional resource folders: a path into one of them must exist."""

_ABSOLUTE = re.compile(r"^(?:/|~|[A-Za-z]:[\\/])")
_PATH_LIKE = re.compile(r"^(?:[\w.-]+/)+[\w.-]*$|^[\w.-]*\w\.[A-Za-z0-9]{1,8}$")
_PUNCTUATION = "`'\"()[]{}<>,;:!?*"


class SkillReferences:
    """Resolves the references of one Markdown file of a skill; collects reached files and problems."""

    def __init__(self, files: set[str], folders: set[str], rel: str, file_label: str) -> None:
        self.files = files
        self.folders = folders
        self.base = posixpath.dirname(rel)
        self.file_label = file_label
        self.reached: set[str] = set()
        self.problems: list[InputError] = []
        self._said: set[tuple[int, str]] = set()
        self._by_lower = {name.lower(): name for name in files | folders}

    def link(self, target: str, line: int) -> None:
        """A Markdown link target (URL-decoded): must resolve inside the skill."""
        self._strict(unquote(target), line, "link")

    def word(self, raw: str, line: int) -> None:
        """A word of prose, a code span or a command: a reference when it reads as a path."""
        token = raw.strip(_PUNCTUATION).rstrip(".")
        if not token or not _PATH_LIKE.match(token) or _ABSOLUTE.match(token):
            return
        normal = posixpath.normpath(token)
        if normal.split("/", 1)[0] in RESOURCE_FOLDERS and "/" in normal:
            self._strict(token, line, "resource")
            return
        for base in dict.fromkeys((self.base, "")):
            joined = posixpath.normpath(posixpath.join(base, token))
            if self._reach(joined):
                return
        for base in dict.fromkeys((self.base, "")):
            joined = posixpath.normpath(posixpath.join(base, token))
            actual = self._by_lower.get(joined.lower())
            if actual is not None:
                self._problem(f"{token!r} names {actual!r} with different letter case; names are case-sensitive "
                              "on most systems, so write it exactly", line)
                self._reach(actual)  # the file meant is known: judge it too, rather than call it unpackaged
                return

    def _strict(self, path: str, line: int, what: str) -> None:
        if _ABSOLUTE.match(path):
            self._problem(f"{what} {path!r} is an absolute path; use a path relative to the skill", line)
            return
        tried = []
        for base in dict.fromkeys((self.base, "")):
            joined = posixpath.normpath(posixpath.join(base, path))
            if joined == ".." or joined.startswith("../"):
                self._problem(f"{what} {path!r} points outside the skill folder", line)
                return
            if self._reach(joined):
                return
            tried.append(joined)
            if what == "link":
                break  # a link resolves from its own file only, as Markdown renderers do
        actual = self._by_lower.get(tried[0].lower())
        hint = f" (there is {actual!r}: names are case-sensitive)" if actual is not None else ""
        self._problem(f"{what} {path!r} does not resolve: no {' or '.join(map(repr, tried))} in the skill{hint}",
                      line)

    def _reach(self, joined: str) -> bool:
        if joined in self.files:
            self.reached.add(joined)
            return True
        if joined in self.folders or joined == ".":
            prefix = "" if joined == "." else f"{joined}/"
            self.reached.update(f for f in self.files if f.startswith(prefix))
            return True
        return False

    def _problem(self, message: str, line: int) -> None:
        if (line, message) not in self._said:  # a name repeated on one line is one problem
            self._said.add((line, message))
            self.problems.append(InputError(message, file=self.file_label, line=line))
