"""Hostile inputs for evalkit's pages: twenty XSS payloads (and bidi and line-separator text) put into every
free-text field a page shows, on a copy of the bundled sample subject.

Used by the browser test of every page kind (``tests/security/test_pages_under_attack.py``). Each payload that runs calls ``alert`` (or ``confirm``/``print``),
sets ``window.__xss``, or asks for a URL under ``evil.invalid``: a test listens for all three.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

PAYLOADS = (
    "<script>alert(1)</script>",
    "</script><script>alert(2)</script>",
    "<img src=x onerror=alert(3)>",
    "<svg onload=alert(4)>",
    "\"><script>alert(5)</script>",
    "'><img src=x onerror=alert(6)>",
    "javascript:alert(7)",
    "<iframe src=\"javascript:alert(8)\"></iframe>",
    "<a href=\"javascript:alert(9)\">click</a>",
    "<!--</script><script>alert(10)</script>-->",
    "]]></script><script>alert(11)</script>",
    "{{constructor.constructor('alert(12)')()}}",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(13)>",
    "<details open ontoggle=alert(14)>",
    "\u2028\u2029</script><script>alert(15)</script>",
    "<style>@import url(https://evil.invalid/15.css)</style>",
    "<img src=\"https://evil.invalid/17.png\">",
    "<link rel=stylesheet href=https://evil.invalid/18.css>",
    "<object data=\"javascript:alert(19)\"></object>",
    "${alert(20)}<script>window.__xss=20</script>",
)
"""Twenty payloads: script tags, script-block escapes, event handlers, URL schemes, template syntax,
parser differentials and requests out (``evil.invalid`` never resolves; a request for it is the failure)."""

BIDI = "refund \u202eredacted\u202c ok"
"""Text with a right-to-left override: shown raw it reverses what follows on the page."""

LINE_SEPARATOR = "tool\u2028name"
"""A tool name with U+2028, which JavaScript once read as a line break inside strings."""


def payload(i: int) -> str:
    return PAYLOADS[i % len(PAYLOADS)]


def _traces(folder: Path) -> None:
    path = folder / "traces.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        trace = json.loads(line)
        if i < 2 * len(PAYLOADS):
            bad = payload(i)
            trace["metadata"]["intent"] = LINE_SEPARATOR if i == 0 else bad
            trace["metadata"]["channel"] = BIDI if i % 2 else bad
            trace["output"] = f"{bad} {BIDI}"
            trace["observations"].append({"id": f"{trace['id']}-hostile", "type": "TOOL",
                                          "name": LINE_SEPARATOR if i == 1 else bad,
                                          "input": {"q": bad}, "output": {"text": f"{bad} {BIDI}"},
                                          "startTime": trace["observations"][-1].get("startTime"),
                                          "endTime": trace["observations"][-1].get("endTime")})
        out.append(json.dumps(trace, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def _annotations(folder: Path) -> None:
    path = folder / "annotations.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        record = json.loads(line)
        if i < len(PAYLOADS):
            record["note"] = f"{payload(i)} {BIDI}"
        out.append(json.dumps(record, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def _taxonomy(folder: Path) -> None:
    path = folder / "failure-modes.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    for i, mode in enumerate(doc["modes"]):
        mode["name"] = f"{payload(i)} {BIDI}"
        mode["definition"] = payload(i + 5)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")


def _matrix(folder: Path) -> None:
    path = folder / "eval-matrix.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    renamed = 0
    for component in doc["components"]:
        component["componentName"] = f"{component['componentName']} {BIDI}"
        for criterion in component["criteria"]:
            criterion["statement"] = f"{payload(renamed)} {criterion['statement']}"
            if criterion["checkMethod"] == "deterministic-script" and renamed < 3:
                criterion["criterionId"] = "</script><script>alert(50)</script>" if renamed == 0 else payload(renamed)
                renamed += 1
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")


def _verdicts(folder: Path) -> None:
    for name in ("criterion-verdicts.jsonl", "criterion-verdicts.prompt-v1.jsonl",
                 "criterion-verdicts.prompt-v2.jsonl"):
        path = folder / name
        lines = path.read_text(encoding="utf-8").splitlines()
        out = []
        for i, line in enumerate(lines):
            record = json.loads(line)
            if i < len(PAYLOADS) and record.get("critique") is not None:
                record["critique"] = f"{payload(i)} {BIDI}"
            out.append(json.dumps(record, ensure_ascii=False))
        path.write_text("\n".join(out) + "\n", encoding="utf-8")


CRITERION = "grounded-policy<img src=x onerror=alert(3)>"
"""The sample's judged criterion ``grounded-policy`` renamed, in every file that names it (labels, verdicts,
the matrix, the judge specs): its id is what the calibration notebook shows."""


def _renamed(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {_renamed(k, old, new): _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    return value


def _criterion(folder: Path) -> None:
    for path in sorted(folder.iterdir()):
        if path.name == "traces.jsonl" or path.suffix not in (".json", ".jsonl", ".yaml"):
            continue
        text = path.read_text(encoding="utf-8")
        if "grounded-policy" not in text:
            continue
        if path.suffix == ".jsonl":
            lines = [json.dumps(_renamed(json.loads(line), "grounded-policy", CRITERION), ensure_ascii=False)
                     for line in text.split("\n") if line]  # not splitlines: U+2028 is inside values
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        elif path.suffix == ".json":
            path.write_text(json.dumps(_renamed(json.loads(text), "grounded-policy", CRITERION), ensure_ascii=False),
                            encoding="utf-8")
        else:
            docs = [_renamed(d, "grounded-policy", CRITERION) for d in yaml.safe_load_all(text)]
            path.write_text(yaml.safe_dump_all(docs, allow_unicode=True, sort_keys=False), encoding="utf-8")


def hostile_subject(source: Path, dest: Path, *, notebooks: list[str] | None = None) -> Path:
    """A copy of the sample subject at ``dest`` with the payloads in its free text; returns its subject file.

    Args:
        source: the sample subject's folder (``data/sample``).
        dest: a new folder.
        notebooks: the notebooks to run (default: all of the subject's).
    """
    shutil.copytree(source, dest)
    _traces(dest)
    _annotations(dest)
    _taxonomy(dest)
    _matrix(dest)
    _verdicts(dest)
    _criterion(dest)
    subject_path = dest / "subject.yaml"
    subject: dict[str, Any] = yaml.safe_load(subject_path.read_text(encoding="utf-8"))
    subject.pop("parameters", None)  # score the subject's own traces, not an eval run elsewhere
    if notebooks is not None:
        subject["notebooks"] = notebooks
    if "01_error_analysis" in subject["notebooks"]:
        subject["parameters"] = {"01_error_analysis": {"by": "intent"}}
    subject_path.write_text(yaml.safe_dump(subject, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return subject_path
