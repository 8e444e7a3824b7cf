"""How a chat-log record is laid out, when it is not OpenAI's ``{messages: [...]}`` with an id field.

A :class:`ChatMapping` says, without code, where a record keeps its messages (``traj`` in tau-bench),
which fields make its trace id (``task_id,trial``: a composite id), which other fields to keep in
the trace's metadata (``reward``: a pass/fail outcome notebooks can use), and how to rename message
roles the importer does not know (``agent=assistant``). The same keys can sit in a YAML/JSON file::

    messages_key: traj
    id_key: [task_id, trial]
    keep: [reward, task_id, trial]
    role_map: {agent: assistant}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import InputError

# The separator of a composite trace id (``--id-key task_id,trial`` -> ``"3/0"``).
ID_SEPARATOR = "/"

_FILE_KEYS = ("messages_key", "id_key", "keep", "role_map")


@dataclass(frozen=True)
class ChatMapping:
    """Where a chat record keeps its messages, id and fields worth keeping (see module docstring).

    Attributes:
        messages_key: the field holding the list of ``{role, content}`` messages.
        id_keys: fields whose values, joined by ``/``, make the trace id; empty: the importer's default.
        keep: the record fields to keep in trace metadata; None keeps every field but the messages.
        role_map: message roles renamed before import, e.g. ``{"agent": "assistant"}``.
    """

    messages_key: str = "messages"
    id_keys: tuple[str, ...] = ()
    keep: tuple[str, ...] | None = None
    role_map: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_default(self) -> bool:
        """True when the user described nothing (plain OpenAI chat records)."""
        return self == ChatMapping()

    def merged(self, other: ChatMapping) -> ChatMapping:
        """This mapping with every field ``other`` sets (command-line options over a mapping file)."""
        return ChatMapping(
            messages_key=other.messages_key if other.messages_key != "messages" else self.messages_key,
            id_keys=other.id_keys or self.id_keys,
            keep=other.keep if other.keep is not None else self.keep,
            role_map={**self.role_map, **other.role_map},
        )

    def sniff_view(self, value: Any) -> Any:
        """``value`` with its messages under ``messages``, so chat formats can recognise it."""
        if self.messages_key == "messages" or not isinstance(value, dict) or self.messages_key not in value:
            return value
        view = {k: v for k, v in value.items() if k != self.messages_key}
        view["messages"] = value[self.messages_key]
        return view


def find_messages_key(value: Any) -> str | None:
    """The first field of a record holding a non-empty list of ``{role, ...}`` messages, or None."""
    if not isinstance(value, dict):
        return None
    for key, field_value in value.items():
        if (isinstance(field_value, list) and field_value
                and all(isinstance(m, dict) and "role" in m for m in field_value[:10])):
            return key
    return None


def split_list(text: str | Iterable[str] | None) -> tuple[str, ...]:
    """``"a,b"`` or ``["a", "b,c"]`` as ``("a", "b", "c")`` (blank parts dropped)."""
    if text is None:
        return ()
    parts = [text] if isinstance(text, str) else list(text)
    return tuple(p.strip() for part in parts for p in str(part).split(",") if p.strip())


def parse_role_map(pairs: Iterable[str], *, file: str | None = None) -> dict[str, str]:
    """``["agent=assistant", ...]`` as a dict.

    Raises:
        InputError: a pair without ``=`` or with an empty side.
    """
    roles: dict[str, str] = {}
    for pair in pairs:
        source, sep, target = pair.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise InputError(f"role map {pair!r} must read FROM=TO, e.g. agent=assistant", file=file,
                             path="role_map")
        roles[source.strip()] = target.strip()
    return roles


def chat_mapping_from_options(*, messages_key: str | None = None, id_key: str | Iterable[str] | None = None,
                              keep: str | Iterable[str] | None = None, role_map: Iterable[str] = (),
                              ) -> ChatMapping:
    """A mapping from command-line style options (comma lists, ``FROM=TO`` role pairs)."""
    return ChatMapping(messages_key=messages_key or "messages", id_keys=split_list(id_key),
                       keep=split_list(keep) if keep is not None else None, role_map=parse_role_map(role_map))


def load_chat_mapping(path: str | Path) -> ChatMapping:
    """A mapping from a YAML or JSON file (keys ``messages_key``, ``id_key``, ``keep``, ``role_map``).

    Raises:
        InputError: unreadable file, unknown key, or a value of the wrong shape (named by field).
    """
    from evalkit.io.documents import read_document

    file = str(path)
    doc = read_document(path, kind="chat-mapping")
    if not isinstance(doc, dict):
        raise InputError("a chat mapping must be an object with keys " + ", ".join(_FILE_KEYS), file=file)
    unknown = sorted(set(doc) - set(_FILE_KEYS))
    if unknown:
        raise InputError(f"unknown key (expected: {', '.join(_FILE_KEYS)})", file=file, path=unknown[0])
    messages_key = doc.get("messages_key", "messages")
    if not isinstance(messages_key, str) or not messages_key:
        raise InputError("must be a field name", file=file, path="messages_key")
    for key in ("id_key", "keep"):
        value = doc.get(key)
        if value is not None and not (isinstance(value, str)
                                      or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise InputError("must be a field name or a list of field names", file=file, path=key)
    role_map = doc.get("role_map") or {}
    if not isinstance(role_map, dict) or not all(isinstance(v, str) for v in role_map.values()):
        raise InputError("must map roles to roles, e.g. {agent: assistant}", file=file, path="role_map")
    return ChatMapping(messages_key=messages_key, id_keys=split_list(doc.get("id_key")),
                       keep=split_list(doc["keep"]) if doc.get("keep") is not None else None,
                       role_map=parse_role_map([f"{k}={v}" for k, v in role_map.items()], file=file))
