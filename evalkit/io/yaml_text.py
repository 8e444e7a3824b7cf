"""The one YAML reader: strict like JSON, bounded against alias bombs and oversized files, and located.

Every YAML file evalkit reads (subjects, judge specs, taxonomies, matrices, datasets, price tables, chat
mappings, skill frontmatter) goes through :func:`yaml_documents`. It refuses, with a clear error naming
the file and line:

- duplicate keys, keys that are not strings, a byte-order mark, text that is not UTF-8;
- a file larger than the limit of its kind (:data:`YAML_LIMITS`): YAML is read by a parser that
  builds a node per value, tens of times slower and larger than JSON; a big table belongs in JSON or
  JSONL;
- aliases that expand past :data:`MAX_ALIAS_VALUES` values, more than :data:`MAX_ALIASES` alias uses,
  a value nested (aliases expanded) deeper than :data:`~evalkit.io.json_values.MAX_NESTING` levels, and
  a value that contains itself. Nine lines of nested aliases ("billion laughs") expand to hundreds of
  millions of values; the check runs on the composed node graph, where an alias is one shared node, in
  time linear in the file, before any value is built.

Each document comes back with a map from field path (``input.trace[2]``) to the line it is written on,
so a contract's problem is reported at its own line rather than the document's first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from evalkit.errors import InputError
from evalkit.io.json_values import MAX_NESTING, TOO_DEEP, ValueProblem, check_json_value

MIB = 1024 * 1024

YAML_LIMITS: dict[str, int] = {
    "dataset": 8 * MIB,
    "eval-matrix": 2 * MIB,
    "judge-spec": 2 * MIB,
    "skill-frontmatter": 64 * 1024,
}
"""Bytes a YAML file of a kind may hold; other kinds (hand-written configuration: a subject, a taxonomy,
a policy, a price table, a chat mapping, an expected flow) get :data:`YAML_DEFAULT_LIMIT`, and a file
whose kind is not known yet (``evalkit validate``) the largest."""

YAML_DEFAULT_LIMIT = 1 * MIB

MAX_ALIASES = 10_000
"""Alias uses (``*name``) in one document at most."""

MAX_ALIAS_VALUES = 100_000
"""Values aliases may add to a document once expanded (beyond those written out)."""


def yaml_limit(kind: str | None) -> int:
    """The size limit of a YAML file of ``kind`` (None: not known yet, the largest limit)."""
    if kind is None:
        return max(YAML_DEFAULT_LIMIT, *YAML_LIMITS.values())
    return YAML_LIMITS.get(kind, YAML_DEFAULT_LIMIT)


def check_yaml_size(size: int, kind: str | None, file: str) -> None:
    """Refuse a YAML text of ``size`` bytes past the limit of its kind, before it is parsed."""
    limit = yaml_limit(kind)
    if size > limit:
        what = f"a {kind} file" if kind else "a YAML file"
        raise InputError(f"{size / MIB:.1f} MiB of YAML: {what} may hold {limit / MIB:g} MiB at most (YAML is "
                         "read tens of times slower than JSON, with a node in memory per value); write it as "
                         "JSON or JSONL", file=file)


@dataclass(frozen=True)
class YamlDocument:
    """One document: its value, the line it starts on, and the line of each field path in it."""

    value: Any
    line: int
    lines: dict[str, int] = field(default_factory=dict)


def _strict_mapping(self: Any, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    """``construct_mapping`` refusing duplicate keys and keys that are not strings."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # ``<<: *anchor`` merges are resolved (and may be overridden) by SafeConstructor
        if not isinstance(key_node, yaml.ScalarNode):
            kind = "list" if isinstance(key_node, yaml.SequenceNode) else "mapping"
            raise yaml.constructor.ConstructorError(
                None, None, f"a {kind} is used as a key; keys must be strings", key_node.start_mark)
        key = self.construct_object(key_node, deep=deep)
        if not isinstance(key, str):
            # ``? [a, b]`` (a list as key), ``1: x``, ``yes: x``: JSON keys are text, and a key
            # turned into text on writing would be a silent change.
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is not a string; quote it", key_node.start_mark)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(self, node, deep=deep)


_Parser = getattr(yaml, "CParser", None)  # libyaml's parser: several times faster than the Python one


class _StrictLoader(*((_Parser,) if _Parser else (yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser,
                                                    yaml.composer.Composer)),
                    yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """SafeLoader's constructor and resolver over libyaml's parser (where installed), strict on keys."""

    def __init__(self, stream: str) -> None:
        if _Parser:
            _Parser.__init__(self, stream)
        else:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    construct_mapping = _strict_mapping


# YAML timestamps would come back as datetime objects; contracts keep timestamps as strings.
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def yaml_documents(data: bytes, *, file: str, kind: str | None = None, first_line: int = 1) -> list[YamlDocument]:
    """Every document of a YAML text, each checked as JSON values are (:mod:`evalkit.io.json_values`).

    Args:
        data: the file's bytes.
        file: the file, for errors.
        kind: the kind of file (``subject``, ``dataset``, ``prices``...), which sets its size limit.
        first_line: the file line the text starts on (a frontmatter block inside a Markdown file).

    Raises:
        InputError: naming the file and line: too large, not UTF-8, invalid YAML, an alias bomb.
    """
    check_yaml_size(len(data), kind, file)
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputError("byte-order mark at start of file; save as UTF-8 without BOM", file=file, line=first_line)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start}", file=file) from None
    offset = first_line - 1
    try:
        return list(_documents(text, file, offset))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"invalid YAML: {problem}", file=file,
                         line=mark.line + 1 + offset if mark else None) from None
    except RecursionError:
        raise InputError(f"invalid YAML: {TOO_DEEP}", file=file) from None


def _documents(text: str, file: str, offset: int) -> Iterator[YamlDocument]:
    loader = _StrictLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            line = node.start_mark.line + 1 + offset
            _check_expansion(node, file, line)
            value = _construct(loader, node, file, line)
            try:
                check_json_value(value)
            except ValueProblem as exc:
                raise InputError(exc.message, file=file, line=line, path=exc.path or None) from None
            yield YamlDocument(value, line, _field_lines(node, offset))
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: yaml.Node, file: str, line: int) -> None:
    """Refuse a document whose aliases expand too far, too deep, too often, or into itself.

    One walk of the node graph, each node once: a node reached again is an alias use; its expanded
    size and depth are computed once and reused, so a billion laughs costs a few hundred steps.
    """
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    composed = aliases = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            size[key] = 1 + sum(size[id(c)] for c in children)
            depth[key] = 1 + max((depth[id(c)] for c in children), default=0) if children else 0
            continue
        if key in size:
            aliases += 1
            continue
        if key in on_path:
            raise InputError("invalid YAML: an alias refers to a value that contains it (a value inside itself)",
                             file=file, line=node.start_mark.line + 1)
        composed += 1
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
        if aliases > MAX_ALIASES:
            break
    expanded = size.get(id(root), 0)
    if aliases > MAX_ALIASES:
        raise InputError(f"YAML with more than {MAX_ALIASES} alias uses (*name) in one document: refused as an "
                         "alias bomb; write the values out, or use JSON", file=file, line=line)
    if expanded - composed > MAX_ALIAS_VALUES:
        raise InputError(f"YAML whose aliases expand to {expanded:,} values ({composed:,} written): more than "
                         f"{MAX_ALIAS_VALUES:,} added by aliases is refused as an alias bomb (\"billion laughs\")",
                         file=file, line=line)
    if depth.get(id(root), 0) > MAX_NESTING:
        raise InputError(f"invalid YAML: {TOO_DEEP}", file=file, line=line)


def _construct(loader: _StrictLoader, node: yaml.Node, file: str, line: int) -> Any:
    """The document's value; a scalar Python cannot build (an integer of 6000 digits) is an InputError."""
    try:
        return loader.construct_document(node)
    except ValueError as exc:
        msg = str(exc)
        if "integer string conversion" in msg:
            msg = "integer with more than 4300 digits; write it as a string to keep it"
        raise InputError(f"invalid YAML: {msg}", file=file, line=line) from None


def _field_lines(root: yaml.Node, offset: int) -> dict[str, int]:
    """The line of each field path in a document: a key's line for a mapping entry, an item's own line."""
    lines: dict[str, int] = {}
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:  # an alias: its fields are located where the anchor wrote them
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    child = f"{path}.{key_node.value}" if path else str(key_node.value)
                    lines.setdefault(child, key_node.start_mark.line + 1 + offset)
                    stack.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                child = f"{path}[{i}]"
                lines.setdefault(child, item.start_mark.line + 1 + offset)
                stack.append((item, child))
    return lines


def line_of(lines: dict[str, int], path: str | None, default: int | None) -> int | None:
    """The line of a field path, or of the nearest field holding it; ``default`` when none is known."""
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return default
