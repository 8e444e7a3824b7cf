"""Base classes for every contract: how a shape is named on disk and how strict it is.

Agent-eval shapes use the seeds' camelCase names on disk and snake_case attributes in Python.
Skill-eval shapes use Taskrail's snake_case names on disk. Closed shapes forbid extra fields.

Serialization keeps the difference between an absent field and an explicit ``null``: only fields
that were set (by the file or by the code that built the model) are written, so a valid file
round-trips byte-identically through ``to_json_obj`` and canonical JSON.

A shape that is a file of its own (a kind of :data:`evalkit.contracts.CONTRACTS`) also takes a ``$schema``
key naming its JSON Schema (``evalkit schema`` writes them), so an editor checks the file as it is typed;
it is kept when the file is written back and never written when absent (:class:`SchemaNamed`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
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


class SchemaNamed(BaseModel):
    """A file's shape that may name its JSON Schema under ``$schema``, as editors expect."""

    model_config = ConfigDict(serialize_by_alias=True)  # snake_case shapes too write it as ``$schema``

    schema_uri: str | None = Field(
        default=None, alias="$schema", exclude_if=lambda value: value is None, title="JSON Schema",
        description="The JSON Schema this file follows, for editors (`evalkit schema` writes them).")

