"""Verdicts as Langfuse scores: a ``score-create`` batch for Langfuse's ingestion API, and sending it.

A score is trace-level (a verdict judges a whole run), named after the criterion (human labels get
the ``.human`` suffix), with the critique as its comment. A criterion whose verdicts are all pass or
fail is a BOOLEAN score (1 = pass, 0 = fail); one that has an ``uncertain`` (or a label ``defer``)
anywhere in the export is CATEGORICAL (``pass`` / ``fail`` / ``uncertain``), so every score of one
name has one data type. Score ids are derived from trace, decider and name: sending again updates
the same scores in Langfuse rather than adding copies.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from evalkit.errors import InputError, require_credential
from evalkit.export.evaluations import Evaluation

INGESTION_PATH = "/api/public/ingestion"
BATCH_EVENTS = 100
"""Events per request: well under the ingestion API's 3.5 MB request limit for critique-sized comments."""
KEY_VARIABLES = ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY")
METADATA_KEY = "evalkit"
"""The score's ``metadata`` key holding the verdict or label as evalkit wrote it (lossless round trip)."""

_NAMESPACE = uuid.UUID("6f1c1a8e-2f1e-5b7a-9a43-3c1d0f0e7e11")
"""Fixed namespace of the derived score ids (any constant UUID would do; this one must never change)."""


def _data_types(evaluations: Sequence[Evaluation]) -> dict[str, str]:
    types: dict[str, str] = {}
    for ev in evaluations:
        if ev.score is None:
            types[ev.name] = "CATEGORICAL"
        else:
            types.setdefault(ev.name, "BOOLEAN")
    return types


def score_id(ev: Evaluation) -> str:
    """The score's id, the same every time this trace's verdict (or label) of this name is exported."""
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(ev.key)))


def ingestion_batch(evaluations: Sequence[Evaluation], *, at: str | None = None) -> dict[str, Any]:
    """The ``{"batch": [...]}`` body of ``POST /api/public/ingestion``, one ``score-create`` per evaluation.

    Args:
        evaluations: from :func:`evalkit.export.evaluations_of`.
        at: the event time for traces that record none (ISO 8601).

    Raises:
        InputError: a trace without any time when ``at`` is not given.
    """
    types = _data_types(evaluations)
    batch = []
    for ev in evaluations:
        when = ev.trace.time or at
        if when is None:
            raise InputError(f"trace {ev.trace.id!r} records no time to stamp its score with; "
                             "pass --time ISO8601", path="--time")
        data_type = types[ev.name]
        body: dict[str, Any] = {
            "id": score_id(ev), "traceId": ev.trace.id, "name": ev.name, "dataType": data_type,
            "value": ev.score if data_type == "BOOLEAN" else ev.result,
            "metadata": {METADATA_KEY: {"kind": ev.kind, "record": ev.record}},
        }
        if ev.explanation:
            body["comment"] = ev.explanation
        event_id = str(uuid.uuid5(_NAMESPACE, body["id"]))
        batch.append({"id": event_id, "timestamp": when, "type": "score-create", "body": body})
    return {"batch": batch}


def basic_auth() -> str:
    """``Basic`` auth from LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY; a missing one is an error naming it."""
    values = [require_credential(name, needed_by="sending scores to Langfuse",
                                 hint=" (the Langfuse project's API keys)") for name in KEY_VARIABLES]
    return "Basic " + base64.b64encode(":".join(values).encode()).decode()


def ingestion_url(endpoint: str) -> str:
    """The ingestion URL of a Langfuse host (``https://cloud.langfuse.com``); a URL with a path is kept."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"{endpoint!r} is not an http(s) URL (e.g. https://cloud.langfuse.com)",
                         path="--endpoint")
    return endpoint.rstrip("/") + INGESTION_PATH if parts.path in ("", "/") else endpoint


def _post(url: str, auth: str, events: list[dict[str, Any]], timeout: float) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps({"batch": events}).encode(), method="POST",
        headers={"Authorization": auth, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (http(s) checked)
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode("utf-8", "replace")
        raise InputError(f"Langfuse at {url} answered HTTP {exc.code}: {detail}", path="--endpoint") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputError(f"could not reach Langfuse at {url}: {reason}", path="--endpoint") from None
    try:
        answer = json.loads(raw) if raw.strip() else {}
    except ValueError:
        answer = {}
    return answer if isinstance(answer, dict) else {}


def send_scores(batch: dict[str, Any], endpoint: str, *, timeout: float = 30.0) -> int:
    """POST the batch to Langfuse's ingestion API with Basic auth from the environment; returns scores sent.

    Raises:
        MissingCredential: a missing ``LANGFUSE_PUBLIC_KEY`` / ``LANGFUSE_SECRET_KEY`` (named).
        InputError: a bad URL, an
            HTTP error, or events the API reported as failed (with how many were accepted before).
    """
    auth = basic_auth()
    url = ingestion_url(endpoint)
    events = batch["batch"]
    sent = 0
    for start in range(0, len(events), BATCH_EVENTS):
        chunk = events[start:start + BATCH_EVENTS]
        errors = _post(url, auth, chunk, timeout).get("errors") or []
        if errors:
            shown = "; ".join(
                f"{e.get('id')}: {e.get('status')} {e.get('message') or e.get('error') or ''}".strip()
                for e in errors[:3] if isinstance(e, dict))
            raise InputError(f"Langfuse rejected {len(errors)} of {len(chunk)} scores in a batch "
                             f"({sent + len(chunk) - len(errors)} accepted so far): {shown}",
                             path="--endpoint")
        sent += len(chunk)
    return sent
