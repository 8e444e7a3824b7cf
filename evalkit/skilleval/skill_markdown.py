"""Reading a skill's Markdown the way the lint needs it: frontmatter, links, code spans, shell commands.

Not a full CommonMark parser: it finds what a reader of a ``SKILL.md`` would follow, line by line.

- **Frontmatter**: the YAML between a first line ``---`` and the next line ``---``.
- **Links**: inline links and images ``[text](target)``, ``![alt](target)`` and reference definitions
  ``[id]: target`` outside code; a target with a URL scheme (``https:``, ``mailto:``) or only an anchor
  (``#part``) is not a file reference.
- **Code spans**: backtick spans outside fenced blocks; **prose**: the other text outside code.
- **Plain block lines**: lines of fenced blocks without an info string, for the caller to judge.
- **Shell commands**: every command line of a fenced block whose info string is a shell (``sh``, ``bash``,
  ``shell``, ``zsh``, ``console``, ``shell-session``); in ``console`` blocks only lines starting with ``$ ``
  are commands (the rest is output). Lines ending in ``\\`` continue; ``#`` lines are comments; each
  pipeline or list part (``|``, ``&&``, ``||``, ``;``) is its own command, leading ``VAR=value`` skipped.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

SHELL_INFO = frozenset({"sh", "bash", "shell", "zsh", "console", "shell-session"})
_PROMPT_INFO = frozenset({"console", "shell-session"})
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PLACEHOLDER = re.compile(r"<(?=[^\s<>])[^<>]*[^\s<>]>|<[^\s<>]>")


@dataclass(frozen=True)
class Mention:
    """Something found in a Markdown file, with its 1-based line."""

    text: str
    line: int


@dataclass
class MarkdownScan:
    """What a Markdown file refers to: link targets, code spans and shell command argvs."""

    links: list[Mention] = field(default_factory=list)
    spans: list[Mention] = field(default_factory=list)
    commands: list[tuple[list[str], int]] = field(default_factory=list)
    plain: list[Mention] = field(default_factory=list)
    """Lines of fenced blocks without an info string: commands only if they read as one (the lint decides)."""
    prose: list[Mention] = field(default_factory=list)
    """Lines outside code, code spans blanked: file names written in prose are references too."""


@dataclass(frozen=True)
class Frontmatter:
    """The YAML text between the ``---`` lines, the line it starts on, and the body after it."""

    yaml: str
    first_line: int
    body: str
    body_line: int


def split_frontmatter(text: str) -> Frontmatter | None:
    """The frontmatter of a ``SKILL.md``, or None when the file does not open with a ``---`` block."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            return Frontmatter("\n".join(lines[1:i]), 2, "\n".join(lines[i + 1:]), i + 2)
    return None


def link_target(raw: str) -> str | None:
    """The file part of a link target, or None when it is a URL or an anchor only."""
    target = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
    if not target or target.startswith("#") or _SCHEME.match(target):
        return None
    return target.split("#", 1)[0].split("?", 1)[0] or None


def scan_markdown(text: str, first_line: int = 1) -> MarkdownScan:
    """Links, code spans and shell commands of a Markdown text whose first line is ``first_line``."""
    scan = MarkdownScan()
    fence: tuple[str, str] | None = None  # (fence marker, info) while inside a fenced block
    pending = ""
    pending_line = 0
    for offset, raw_line in enumerate(text.split("\n")):
        number = first_line + offset
        line = raw_line.rstrip("\r")
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = (opened.group(1), opened.group(2).lower())
            continue
        if fence is not None:
            marker, info = fence
            stripped = line.strip()
            if stripped.startswith(marker[0] * len(marker)) and not stripped.strip(marker[0]):
                fence, pending = None, ""
                continue
            if info in SHELL_INFO or not info:
                if not pending:
                    pending_line = number
                pending, complete = _continue_line(pending, line)
                if complete and info:
                    _add_shell_line(scan, pending, pending_line, prompt=info in _PROMPT_INFO)
                elif complete and pending:
                    scan.plain.append(Mention(pending, pending_line))
                if complete:
                    pending = ""
            continue
        for match in _CODE_SPAN.finditer(line):
            scan.spans.append(Mention(match.group(2).strip(), number))
        prose = _CODE_SPAN.sub(" ", line)
        scan.prose.append(Mention(prose, number))
        for match in _INLINE_LINK.finditer(prose):
            scan.links.append(Mention(match.group(1), number))
        definition = _REFERENCE_DEF.match(prose)
        if definition:
            scan.links.append(Mention(definition.group(1), number))
    return scan


def _continue_line(pending: str, line: str) -> tuple[str, bool]:
    joined = f"{pending} {line.strip()}" if pending else line.strip()
    if joined.endswith("\\"):
        return joined[:-1].rstrip(), False
    return joined, True


def _add_shell_line(scan: MarkdownScan, line: str, number: int, *, prompt: bool) -> None:
    if prompt:
        if not line.startswith("$ "):
            return  # output, not a command
        line = line[2:]
    if not line or line.startswith("#"):
        return
    for argv in shell_commands(line):
        scan.commands.append((argv, number))


def shell_commands(line: str) -> list[list[str]]:
    """Each simple command of a shell line as an argv (program first, ``VAR=value`` prefixes dropped).

    A line shlex cannot split (an open quote) is split on whitespace, so its program is still checked.
    Documentation placeholders like ``<file.pdf>`` are arguments, not redirections.
    """
    line = _PLACEHOLDER.sub("PLACEHOLDER", line)
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:
        tokens = line.split()
    commands: list[list[str]] = []
    current: list[str] = []
    redirect_target = False
    tokens.append(";")
    for i, token in enumerate(tokens):
        if redirect_target and not set(token) <= set("|&;()<>"):
            redirect_target = False  # the file a redirection names, not a word of the command
        elif _is_redirect(token) or (token.isdigit() and _is_redirect(tokens[i + 1])):
            redirect_target = _is_redirect(token)
        elif set(token) <= set("|&;()"):
            redirect_target = False
            while current and _ASSIGNMENT.match(current[0]):
                current.pop(0)
            if current:
                commands.append(current)
            current = []
        else:
            current.append(token)
    return commands


def _is_redirect(token: str) -> bool:
    return set(token) <= set("<>&") and bool(set(token) & set("<>"))
