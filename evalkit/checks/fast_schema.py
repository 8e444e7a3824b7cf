"""A compiled JSON Schema validator for the common case, with ``jsonschema`` the authority.

``schema-conformance`` runs on every trace; ``jsonschema``'s validator takes about 25 us a document,
a compiled ``fastjsonschema`` function about 1.5 us. The two agree only where their drafts and habits
agree, so the compiled function is used only for schemas written entirely with the keywords listed in
:data:`SAFE_KEYWORDS` (no ``default``: fastjsonschema writes defaults into the document it checks; no
``$ref``, no array-form ``items``, no enums or consts of other than strings, whose equality differs
for ``true`` and ``1``), and only its *valid* answer is taken: an invalid document is checked again by
``jsonschema``, whose verdict and message stand. ``tests/checks/test_fast_schema.py`` holds the two
to the same answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:  # a dependency of nbformat, which papermill and nbconvert need; optional here all the same
    import fastjsonschema
except ImportError:  # pragma: no cover - the jsonschema validator alone then
    fastjsonschema = None

_SCHEMA_MAPS = {"properties", "patternProperties"}
_SCHEMA_LISTS = {"anyOf", "allOf", "oneOf"}
_SCHEMA_ONE = {"not", "items", "additionalProperties"}
_PLAIN = {"type", "required", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minProperties",
          "maxProperties", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "format", "title",
          "description", "$comment", "examples"}
SAFE_KEYWORDS = frozenset(_SCHEMA_MAPS | _SCHEMA_LISTS | _SCHEMA_ONE | _PLAIN | {"enum", "const"})
"""Keywords whose meaning the compiled validator shares with ``jsonschema``'s Draft 2020-12."""

_DRAFTS = {"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema",
           "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema"}


def _safe(schema: Any, root: bool = False) -> bool:
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        if key == "$schema" and root:
            if value not in _DRAFTS:
                return False
        elif key not in SAFE_KEYWORDS:
            return False
        elif key in _SCHEMA_MAPS:
            if not isinstance(value, dict) or not all(_safe(v) for v in value.values()):
                return False
        elif key in _SCHEMA_LISTS:
            if not isinstance(value, list) or not all(_safe(v) for v in value):
                return False
        elif key in _SCHEMA_ONE:
            if not _safe(value):  # a list for items is the tuple form, read differently by the drafts
                return False
        elif not _plain_value_safe(key, value):
            return False
    return True


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _plain_value_safe(key: str, value: Any) -> bool:
    if key == "enum":
        return _strings(value)
    if key == "const":
        return isinstance(value, str)
    if key == "type":
        return isinstance(value, str) or _strings(value)
    return True


def fast_validity(schema: dict[str, Any]) -> Callable[[Any], bool] | None:
    """A function telling whether a document is valid, for a schema :data:`SAFE_KEYWORDS` covers; None
    for any other schema (or without fastjsonschema): then ``jsonschema`` alone decides."""
    if fastjsonschema is None or not _safe(schema, root=True):
        return None
    try:
        validate = fastjsonschema.compile({k: v for k, v in schema.items() if k != "$schema"}, use_formats=False)
    except Exception:  # noqa: BLE001 - anything it cannot compile, jsonschema reads
        return None
    invalid = fastjsonschema.JsonSchemaValueException

    def valid(document: Any) -> bool:
        try:
            validate(document)
        except invalid:
            return False
        except Exception:  # noqa: BLE001 - a document it cannot read: jsonschema decides
            return False
        return True

    return valid


class SchemaCheck:
    """A JSON Schema checked once, then asked of many documents: the compiled function's *valid* first
    (where :func:`fast_validity` gives one), else ``jsonschema``, whose answer and message stand.

    Raises:
        ValueError: the schema is not a valid JSON Schema (the message says why).
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        # Imported here: importing jsonschema takes about 2 s (its URI format checker compiles grammars),
        # paid by every process that imports the checks (a cluster's client and each worker) otherwise.
        import jsonschema

        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"schema is not a valid JSON Schema: {exc.message}") from None
        self.validator = cls(schema)
        # Compiled once per schema: its "valid" is trusted, anything else is asked of jsonschema.
        self.fast_valid = fast_validity(schema) if cls is jsonschema.Draft202012Validator else None

    def valid(self, document: Any) -> bool:
        """Whether the document conforms."""
        return self.fast_valid is not None and self.fast_valid(document) or self.validator.is_valid(document)

    def problem(self, document: Any) -> tuple[str, str] | None:
        """Why the document does not conform, as ``(where, message)`` (``where`` like ``.items[0]``, empty
        at the root), or None when it does."""
        if self.valid(document):
            return None
        from jsonschema.exceptions import best_match

        error = best_match(self.validator.iter_errors(document))
        if error is None:
            return None
        at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        return at, error.message[:160]


__all__ = ["SAFE_KEYWORDS", "SchemaCheck", "fast_validity"]
