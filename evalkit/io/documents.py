"""Reading records from JSON, JSONL and YAML files, each with the line it starts on.

A record is one value to validate: the whole document of a JSON file, one line of a JSONL file, or
one document of a (multi-document) YAML file. YAML is read as strictly as JSON: duplicate keys and
a byte-order mark are errors, and a value must be one JSON could hold, as :mod:`evalkit.io.json_values`
says (string keys, finite numbers, no sets, bytes or timestamps, bounded nesting).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evalkit.errors import InputError
from evalkit.io.json_values import TOO_DEEP, ValueProblem, check_json_value
from evalkit.io.regular import open_regular
from evalkit.io.strict_json import iter_jsonl_strict, loads_strict


@dataclass(frozen=True)
class Record:
    """One value read from a file; ``line`` is where it starts (None for a whole JSON document)."""

    value: Any
    line: int | None = None


class _StrictYamlLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys instead of keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # ``<<: *anchor`` merges are resolved (and may be overridden) by SafeLoader
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
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# YAML timestamps would come back as datetime objects; contracts keep timestamps as strings.
_StrictYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def document_format(path: str | Path) -> str:
    """``json``, ``jsonl`` or ``yaml`` from the file's extension."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    return "json"


def _read_yaml(path: Path) -> list[Record]:
    with open_regular(path) as fh:
        data = fh.read()
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputError("byte-order mark at start of file; save as UTF-8 without BOM", file=str(path), line=1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start}", file=str(path)) from None
    records: list[Record] = []
    try:
        loader = _StrictYamlLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                line = node.start_mark.line + 1
                value = _construct(loader, node, path, line)
                try:
                    check_json_value(value)
                except ValueProblem as exc:
                    raise InputError(exc.message, file=str(path), line=line, path=exc.path or None) from None
                records.append(Record(value, line))
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"invalid YAML: {problem}", file=str(path),
                         line=mark.line + 1 if mark else None) from None
    except RecursionError:
        raise InputError(f"invalid YAML: {TOO_DEEP}", file=str(path)) from None
    return records


def _construct(loader: _StrictYamlLoader, node: yaml.Node, path: Path, line: int) -> Any:
    """The document's value; a scalar Python cannot build (an integer of 6000 digits) is an InputError."""
    try:
        return loader.construct_document(node)
    except ValueError as exc:
        msg = str(exc)
        if "integer string conversion" in msg:
            msg = "integer with more than 4300 digits; write it as a string to keep it"
        raise InputError(f"invalid YAML: {msg}", file=str(path), line=line) from None


def read_records(path: str | Path, fmt: str | None = None) -> list[Record]:
    """All records of a JSON, JSONL or YAML file.

    Args:
        path: the file.
        fmt: ``json``, ``jsonl`` or ``yaml``; guessed from the extension when None.

    Raises:
        InputError: the file cannot be read or parsed; the error names file and line.
    """
    p = Path(path)
    fmt = fmt or document_format(p)
    if fmt == "jsonl":
        return [Record(value, line) for line, value in iter_jsonl_strict(p)]
    if fmt == "yaml":
        return _read_yaml(p)
    with open_regular(p) as fh:
        data = fh.read()
    return [Record(loads_strict(data, file=str(p)))]


def read_document(path: str | Path) -> Any:
    """The single document of a JSON or YAML file (an error if a YAML file holds several)."""
    records = read_records(path)
    if len(records) != 1:
        raise InputError(f"expected one document, found {len(records)}", file=str(path))
    return records[0].value
