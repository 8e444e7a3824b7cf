"""The case of field names in JSON evalkit prints: camelCase, as the agent-eval contracts are on disk.

Every ``--json`` output of the CLI uses it (see ``/work/coord/JSON_CASE.md`` for the rule's history).
Only field names are converted: the keys of a plain dict are data (a failure-mode id, a tool name, an
observation type) and are kept exactly as they are.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel


def camel_json(value: Any) -> Any:
    """``value`` as JSON-ready data with every dataclass field name in camelCase.

    Dataclasses become dicts of their fields (``shared_traces`` -> ``sharedTraces``), contracts their
    on-disk JSON, tuples lists; dict keys and everything else are kept.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {to_camel(f.name): camel_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, dict):
        return {k: camel_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [camel_json(v) for v in value]
    return value
