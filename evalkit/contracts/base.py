"""Base classes for every contract: how a shape is named on disk and how strict it is.

Agent-eval shapes use the seeds' camelCase names on disk and snake_case attributes in Python.
Skill-eval shapes use Taskrail's snake_case names on disk. Closed shapes forbid extra fields.

Serialization keeps the difference between an absent field and an explicit ``null``: only fields
that were set (by the file or by the code that built the model) are written, so a valid file
round-trips byte-identically through ``to_json_obj`` and canonical JSON.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelContract(BaseModel):
    """A closed agent-eval shape, camelCase on disk."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    def to_json_obj(self) -> dict[str, Any]:
        """The JSON-ready dict of this model: on-disk names, only the fields that were set."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class OpenCamelContract(CamelContract):
    """An agent-eval shape whose source schema is open: extra fields are kept as given."""

    model_config = ConfigDict(extra="allow")


class SnakeContract(BaseModel):
    """A closed skill-eval shape, snake_case on disk as in Taskrail's contract."""

    model_config = ConfigDict(extra="forbid")

    def to_json_obj(self) -> dict[str, Any]:
        """The JSON-ready dict of this model, only the fields that were set."""
        return self.model_dump(mode="json", exclude_unset=True)
