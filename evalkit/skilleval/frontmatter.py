"""Agent Skills frontmatter: the YAML block at the top of a ``SKILL.md``, checked against the format's limits.

The format (agentskills.io specification) allows exactly these fields: ``name`` (required; 1-64
characters, lowercase letters, digits and single hyphens, not starting or ending with a hyphen, equal to
the skill's folder name), ``description`` (required; 1-1024 characters), ``license``, ``compatibility``
(1-500 characters), ``metadata`` (a map of strings to strings) and ``allowed-tools`` (a space-separated
string). Anything else is refused, as the format's reference validator does.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from evalkit.errors import InputError
from evalkit.io.yaml_text import check_yaml_size, yaml_documents
from evalkit.skilleval.skill_markdown import Frontmatter

NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")


def check_frontmatter(front: Frontmatter, folder: str, file: str) -> tuple[dict[str, Any], list[InputError]]:
    """The frontmatter's fields and its problems, each with the file and the line of the field.

    Args:
        front: the frontmatter block of the file.
        folder: the skill's folder name, which ``name`` must equal.
        file: the file, for the problems.
    """
    problems: list[InputError] = []

    def problem(message: str, line: int, field: str | None = None) -> None:
        problems.append(InputError(message, file=file, line=line, path=field))

    data = front.yaml.encode("utf-8", "surrogatepass")
    try:
        check_yaml_size(len(data), "skill-frontmatter", file)
        node = yaml.compose(front.yaml, Loader=yaml.SafeLoader)  # nodes only: an alias stays one shared node
    except InputError as exc:
        problems.append(exc)
        return {}, problems
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = front.first_line + (mark.line if mark is not None else 0)
        problem(f"frontmatter is not valid YAML: {getattr(exc, 'problem', None) or exc}", line)
        return {}, problems
    if not isinstance(node, yaml.MappingNode):
        problem("frontmatter must be a YAML mapping of fields (name, description, ...)", front.first_line)
        return {}, problems
    lines: dict[str, int] = {}
    for key_node, _ in node.value:
        key = str(key_node.value)
        line = front.first_line + key_node.start_mark.line
        if key in lines:
            problem(f"duplicate field (first on line {lines[key]})", line, key)
        elif key not in FIELDS:
            problem(f"unknown field; the Agent Skills format allows {', '.join(FIELDS)}", line, key)
        lines.setdefault(key, line)
    if len(lines) < len(node.value):
        return {}, problems  # which of the duplicates holds is not for evalkit to guess
    try:  # the one bounded, strict reader: aliases, nesting and values held to the house's rules
        value = yaml_documents(data, file=file, kind="skill-frontmatter", first_line=front.first_line)[0].value
    except InputError as exc:
        problems.append(exc)
        return {}, problems
    for key in ("name", "description"):
        if key not in value:
            problem("required field is missing", front.first_line, key)
    _check_fields(value, lines, folder, problem)
    return value, problems


def _check_fields(value: dict[str, Any], lines: dict[str, int], folder: str, problem: Any) -> None:
    def text(key: str, low: int, high: int | None) -> str | None:
        if key not in value:
            return None
        item = value[key]
        if not isinstance(item, str):
            problem(f"must be a string, got {type(item).__name__}", lines[key], key)
            return None
        if len(item.strip()) < low or (high is not None and len(item) > high):
            limit = f"{low}-{high}" if high is not None else f"at least {low}"
            problem(f"must be {limit} characters, got {len(item)}", lines[key], key)
        return item

    name = text("name", 1, MAX_NAME)
    if name is not None:
        if not NAME_PATTERN.fullmatch(name):
            problem(f"must be lowercase letters, digits and single hyphens (not at either end), got {name!r}",
                    lines["name"], "name")
        if name != folder:
            problem(f"must equal the skill's folder name {folder!r}, got {name!r}", lines["name"], "name")
    text("description", 1, MAX_DESCRIPTION)
    text("license", 1, None)
    text("compatibility", 1, MAX_COMPATIBILITY)
    text("allowed-tools", 1, None)
    metadata = value.get("metadata")
    if "metadata" in value and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        problem("must be a map of strings to strings", lines["metadata"], "metadata")
