"""Where a judge run keeps its finished items, how it writes them out, sorted, at the end, and its summary.

Finished items are kept as they complete (in any order) in an external sort
(:class:`~evalkit.io.sorted_spill.SortedSpill`: sorted runs spilled to a temporary file), so a run of any size
holds only a bounded number of rows in memory; at the end they are merged by (criterion, trace, repeat)
and streamed into the output files, each written atomically. The same
inputs therefore give byte-identical files whatever order the calls finished in.

Repeats (``--repeats N``). Every repeat's record goes to the runs sidecar; the verdicts file gets one
canonical verdict per (criterion, trace), chosen by this rule: the majority of pass/fail among the
repeats that decided (uncertain and error repeats abstain); the verdict written is the first repeat
(lowest number) with the majority result, as the judge wrote it. A tie between pass and fail is
``uncertain``, blocked by the normative premise "repeats disagree: P pass, F fail of N". When every
repeat abstained the first uncertain repeat's verdict is written; when every repeat failed, none.
``<out>.repeats.jsonl`` gives each item's pass rate among deciding repeats and its spread (the standard
deviation of the pass/fail outcome across them: 0 when they agree, 0.5 at an even split). Both are of the
judge's own answers: a pass or fail that grounding downgraded to uncertain (its refs did not resolve) still
shows how the judge answered (``downgraded`` counts them), so a judge that said fail once and pass once is
seen to disagree with itself even when neither answer was grounded.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from evalkit.errors import InputError
from evalkit.io.atomic import atomic_writers
from evalkit.io.canonical import SMALL_FLOAT_MARKERS, canonical_line, compact_json
from evalkit.io.sorted_spill import SortedSpill
from evalkit.judge.run_control import ErrorTally

_RESUMABLE = """
CREATE TABLE resumable (c TEXT, t TEXT, r INTEGER, digest TEXT, result TEXT, verdict TEXT, run TEXT,
                        PRIMARY KEY (c, t, r)) WITHOUT ROWID
"""


@dataclass
class RepeatStats:
    """Across all items: how many had repeats that disagreed, and the mean spread."""

    items: int = 0
    disagreeing: int = 0
    spread_sum: float = 0.0

    @property
    def mean_spread(self) -> float | None:
        return self.spread_sum / self.items if self.items else None


class FinishedItems:
    """The run's finished (criterion, trace, repeat) items, spilled to disk sorted until written out.

    Records of an interrupted run's journal wait in a temporary SQLite table until their item comes up
    (:meth:`take_resumable`); finished items go to a :class:`~evalkit.io.sorted_spill.SortedSpill`.
    """

    def __init__(self, *, run_rows: int = 4096) -> None:
        self._resumable: sqlite3.Connection | None = None
        self._done = SortedSpill(3, run_rows=run_rows)
        self._add = self._done.add

    def add_resumable(self, c: str, t: str, r: int, digest: str, result: str | None, verdict: str | None,
                      run: str) -> None:
        """A record from an earlier, interrupted run's journal (the last one per item wins)."""
        if self._resumable is None:
            self._resumable = sqlite3.connect("", isolation_level=None)  # "": a private temporary file
            self._resumable.execute(_RESUMABLE)
            self._resumable.execute("BEGIN")
        self._resumable.execute("INSERT OR REPLACE INTO resumable VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (c, t, r, digest, result, verdict, run))

    def take_resumable(self, c: str, t: str, r: int, digest: str) -> tuple[str | None, str | None, str] | None:
        """Move an item judged by an earlier run into this run when its prompt is unchanged; its
        ``(result, verdict line, run line)`` (result and verdict None for a kept error), or None."""
        if self._resumable is None:
            return None
        row = self._resumable.execute("SELECT result, verdict, run FROM resumable WHERE c=? AND t=? AND r=? "
                                      "AND digest=?", (c, t, r, digest)).fetchone()
        if row is None:
            return None
        self.add(c, t, r, *row)
        return row

    def add(self, c: str, t: str, r: int, result: str | None, verdict: str | None, run: str) -> None:
        """One finished item: its verdict line (None for an error row) and its run-record line."""
        self._add((c, t, r, result, verdict, run))

    def _sorted(self) -> Iterator[tuple[str, str, int, str | None, str | None, str]]:
        """The items by (criterion, trace, repeat); an item finished twice is an error."""
        last: tuple | None = None
        for row in self._done.sorted():
            if last is not None and row[0] == last[0] and row[1] == last[1] and row[2] == last[2]:
                raise InputError(f"criterion {row[0]!r} on trace {row[1]!r} was given twice: each "
                                 "(criterion, trace) is judged once per repeat")
            last = row
            yield row  # type: ignore[misc]

    def rows(self) -> Iterator[tuple[str, str, int, str | None, str | None, str]]:
        """The finished items by (criterion, trace, repeat): ``(c, t, r, result, verdict line, run line)``
        (a cluster run's partitions send these to be merged; an item finished twice is an error)."""
        return self._sorted()

    def write(self, verdicts: Path, runs: Path, repeats: int, repeat_stats: Path | None, *,
              before_sync: Callable[[], None] | None = None) -> tuple[int, RepeatStats]:
        """Write the verdicts file, the runs sidecar and (with repeats) the per-item repeat statistics.

        Args:
            before_sync: called once every line is written, just before the files are flushed to disk:
                a write started there (the journal's last lines) goes to disk at the same time as them.

        Returns:
            The number of verdicts written, and the repeat statistics.
        """
        stats = RepeatStats()
        written = 0
        with atomic_writers([verdicts, runs, *([repeat_stats] if repeat_stats else [])]) as files:
            vf, rf, sf = files if repeat_stats else (*files, _Null())
            group: list[tuple] = []
            if repeats == 1:  # the lines joined a block at a time: one write call per thousand rows
                block: list[tuple] = []
                for row in self._sorted():
                    block.append(row)
                    if len(block) == 1024:
                        written += _write_block(block, vf, rf)
                        block = []
                written += _write_block(block, vf, rf)
            else:
                for row in self._sorted():
                    rf.write(row[5])
                    if group and (group[0][0], group[0][1]) != (row[0], row[1]):
                        written += _write_group(group, vf, sf, stats)
                        group = []
                    group.append(row)
                if group:
                    written += _write_group(group, vf, sf, stats)
            if before_sync is not None:
                before_sync()
        return written, stats

    def close(self) -> None:
        """Delete the temporary files."""
        self._done.close()
        if self._resumable is not None:
            self._resumable.close()


def _write_block(rows: list[tuple], vf: Any, rf: Any) -> int:
    rf.write("".join([row[5] for row in rows]))
    verdicts = [row[4] for row in rows if row[4] is not None]
    vf.write("".join(verdicts))
    return len(verdicts)


class _Null:
    """Where the repeat statistics go when there are no repeats."""

    def write(self, text: str) -> None:
        return None


def canonical_of_repeats(rows: list[tuple]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The canonical verdict of one item's repeats (module docstring's rule) and its statistics."""
    c, t = rows[0][0], rows[0][1]
    results = [row[3] for row in rows]
    n_pass, n_fail = results.count("pass"), results.count("fail")
    n_uncertain = results.count("uncertain")
    decided = n_pass + n_fail
    answers = [_judge_answer(row) for row in rows]
    a_pass, a_fail = answers.count("pass"), answers.count("fail")
    rate = a_pass / (a_pass + a_fail) if a_pass + a_fail else None
    spread = math.sqrt(rate * (1 - rate)) if rate is not None else None
    stats = {"criterionId": c, "traceId": t, "repeats": len(rows), "pass": n_pass, "fail": n_fail,
             "uncertain": n_uncertain, "errors": len(rows) - n_pass - n_fail - n_uncertain,
             "passRate": rate, "spread": spread}
    if a_pass + a_fail > decided:
        stats["downgraded"] = a_pass + a_fail - decided
    verdict: dict[str, Any] | None
    if n_pass != n_fail:
        majority = "pass" if n_pass > n_fail else "fail"
        verdict = orjson.loads(next(row[4] for row in rows if row[3] == majority))
    elif decided:
        verdict = {"criterionId": c, "traceId": t, "result": "uncertain", "confidence": 0.5,
                   "critique": f"The {len(rows)} repeats of this judge disagree; see the runs sidecar.",
                   "blockedBy": {"kind": "normative",
                                 "text": f"repeats disagree: {n_pass} pass, {n_fail} fail of {len(rows)}"}}
    elif n_uncertain:
        verdict = orjson.loads(next(row[4] for row in rows if row[3] == "uncertain"))
    else:
        verdict = None
    stats["canonical"] = verdict["result"] if verdict else None
    return verdict, stats


_DOWNGRADED = re.compile(r'\[verify downgrade\] was (pass|fail)')


def _judge_answer(row: tuple) -> str | None:
    """The judge's own answer of a repeat: its result, or the pass or fail grounding downgraded."""
    if row[3] == "uncertain" and row[4] is not None and "[verify downgrade]" in row[4]:
        found = _DOWNGRADED.search(row[4])
        if found:
            return found.group(1)
    return row[3]


def _write_group(rows: list[tuple], vf: Any, sf: Any, stats: RepeatStats) -> int:
    verdict, item = canonical_of_repeats(rows)
    sf.write(canonical_line(item))
    stats.items += 1
    if item["spread"]:  # the judge answered both pass and fail (grounded or not)
        stats.disagreeing += 1
    stats.spread_sum += item["spread"] or 0.0
    if verdict is None:
        return 0
    vf.write(canonical_line(verdict))
    return 1


@dataclass
class JudgeRunSummary:
    """What a judge run did, for the CLI's closing line and for tests."""

    verdicts_path: Path
    runs_path: Path
    journal_path: Path
    items: int = 0
    verdicts: int = 0
    calls: int = 0
    cache_hits: int = 0
    resumed: int = 0
    without_call: int = 0
    errors: int = 0
    not_run: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    """Spent by this run's calls, where the price is known."""
    unknown_cost_calls: int = 0
    """Calls whose cost is unknown (no price for the model, or no token counts): not counted as 0."""
    stopped: str | None = None
    seconds: float = 0.0
    repeat_stats: RepeatStats | None = None
    kept_errors: int = 0
    """Error rows an earlier run left (deterministic failures, journaled or cached): not asked again."""
    refused: int = 0
    """Items refused before any call: their prompt cannot fit the model's context."""
    tally: ErrorTally = field(default_factory=ErrorTally)
    """The error rows by cause, one example each."""

    @property
    def retry_count(self) -> int:
        return sum(self.retries.values())

    def describe(self) -> str:
        """One line: counts, tokens, cost (unknown said as such), and why the run stopped early."""
        cost = f"${self.cost_usd:.4f}" + (f" + unknown for {self.unknown_cost_calls} calls"
                                          if self.unknown_cost_calls else "")
        line = (f"{self.items} items: {self.verdicts} verdicts, {self.calls} calls, {self.cache_hits} cached, "
                f"{self.resumed} resumed, {self.without_call} decided without a call, {self.retry_count} "
                f"retries, {self.errors} errors{self._errors_detail()}, {self.not_run} not run; tokens "
                f"{self.input_tokens} in / "
                f"{self.output_tokens} out; cost {cost}; {self.seconds:.2f}s")
        return line + (f"; stopped: {self.stopped}" if self.stopped else "")

    def _errors_detail(self) -> str:
        parts = []
        if self.refused:
            parts.append(f"{self.refused} too long for the context, refused before calling")
        if self.kept_errors:
            parts.append(f"{self.kept_errors} kept from an earlier run, not asked again (--retry-errors asks)")
        return f" ({'; '.join(parts)})" if parts else ""


def sidecar_paths(out: Path) -> tuple[Path, Path, Path]:
    """``(runs, journal, repeats)`` beside the verdicts file ``out`` (``x.jsonl`` -> ``x.runs.jsonl``)."""
    stem = out.name[:-len(".jsonl")] if out.name.endswith(".jsonl") else out.name
    return (out.with_name(f"{stem}.runs.jsonl"), out.with_name(f"{stem}.journal.jsonl"),
            out.with_name(f"{stem}.repeats.jsonl"))


_SMALL_FLOAT = re.compile(rb"[0-9]e-|0\.0000")
"""Matches wherever one of canonical's :data:`SMALL_FLOAT_MARKERS` occurs, in one scan."""
assert all(_SMALL_FLOAT.search(m.encode()) for m in SMALL_FLOAT_MARKERS)


def record_line(obj: dict[str, Any]) -> str:
    """``canonical_line(obj)``, the same bytes, with one regex scan instead of canonical's general checks.

    Only for records this module builds: their floats are validated finite (confidence, cost), so the
    non-finite check is moot; a float orjson writes differently from ``json`` (below 1e-4, a call's
    cost often is) leaves one of canonical's markers, and then ``json`` writes the line, as canonical would.
    """
    try:
        raw = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate in a critique, say
        return compact_json(obj, allow_nan=False) + "\n"
    if _has_small_float(raw):
        return _with_small_floats(obj)
    return raw.decode() + "\n"


def _has_small_float(raw: bytes) -> bool:
    return (b"e-" in raw or b"0.0000" in raw) and _SMALL_FLOAT.search(raw) is not None  # substring tests: faster


def _with_small_floats(obj: dict[str, Any]) -> str:
    """``record_line`` of a record holding a float below 1e-4 (a call's cost, usually, at the top level).

    Such top-level floats are written as ``json`` writes them (``repr``) into orjson's text, when nothing
    else in the record would still differ (checked with those floats left out); otherwise ``json`` writes
    the whole line. A call's cost is often this small, and ``json`` took a sixth of a call's time."""
    small = [k for k, v in obj.items() if type(v) is float and v != 0.0 and abs(v) < 1e-4]
    if small:
        rest = orjson.dumps({**obj, **dict.fromkeys(small, 0)}, option=orjson.OPT_SORT_KEYS)
        if not _has_small_float(rest):
            exact = {k: orjson.Fragment(repr(obj[k])) for k in small}
            return orjson.dumps({**obj, **exact}, option=orjson.OPT_SORT_KEYS).decode() + "\n"
    return compact_json(obj, allow_nan=False) + "\n"


def journal_line(c: str, t: str, r: int, digest: str, result: str, verdict_line: str, run_line: str) -> str:
    """``record_line`` of the journal record ``{criterionId, traceId, repeat, promptDigest, result, verdict,
    run}``, the same bytes, assembled around the verdict and run lines already written (not serialized twice).
    """
    try:
        cj, dj, rj, tj = (orjson.dumps(v).decode() for v in (c, digest, result, t))
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate in an id; the general path
        return record_line({"criterionId": c, "traceId": t, "repeat": r, "promptDigest": digest, "result": result,
                            "verdict": orjson.loads(verdict_line), "run": orjson.loads(run_line)})
    return (f'{{"criterionId":{cj},"promptDigest":{dj},"repeat":{int(r)},"result":{rj},"run":{run_line[:-1]},'
            f'"traceId":{tj},"verdict":{verdict_line[:-1]}}}\n')


def cached_run_line(provider: str, model: str, temperature: float) -> Any:
    """A function writing the run record of a reply replayed from the cache, for one run's judge:
    ``record_line`` of that record, the same bytes, from a template (a rerun writes 50,000+ a second).

    The record's keys in sorted order around the parts that vary; numbers as ``json`` writes them
    (``repr`` of a float is json's text, small floats included), strings by orjson, as record_line does.
    """
    dumps = orjson.dumps
    model_j, provider_j = dumps(model).decode(), dumps(provider).decode()
    temperature_j = repr(float(temperature))
    if "n" in temperature_j:  # inf or nan: refused, as record_line would
        raise ValueError(f"temperature {temperature!r} is not a finite number")

    def line(c: str, t: str, r: int, digest: str, result: str, input_tokens: int | None,
             output_tokens: int | None, cost: float | None, mode: str, judge: str | None = None) -> str:
        try:
            c_j, t_j, d_j = dumps(c).decode(), dumps(t).decode(), dumps(digest).decode()
            res_j, mode_j = dumps(result).decode(), dumps(mode).decode()
            judge_j = "" if judge is None else f'"judgeDigest":{dumps(judge).decode()},'
        except TypeError:  # a lone surrogate: the general path
            c_j = None
        if c_j is None or cost is not None and not math.isfinite(cost):
            record = {"criterionId": c, "traceId": t, "repeat": r, "provider": provider, "model": model,
                      "temperature": float(temperature), "promptDigest": digest, "result": result,
                      "inputTokens": input_tokens, "outputTokens": output_tokens, "attempts": 0,
                      "cached": True, "costUsd": cost, "structuredOutput": mode}
            if judge is not None:
                record["judgeDigest"] = judge
            return record_line(record)
        cost_j = "null" if cost is None else repr(float(cost))
        in_j = "null" if input_tokens is None else str(int(input_tokens))
        out_j = "null" if output_tokens is None else str(int(output_tokens))
        return (f'{{"attempts":0,"cached":true,"costUsd":{cost_j},"criterionId":{c_j},"inputTokens":{in_j},'
                f'{judge_j}"model":{model_j},"outputTokens":{out_j},"promptDigest":{d_j},"provider":{provider_j},'
                f'"repeat":{int(r)},"result":{res_j},"structuredOutput":{mode_j},"temperature":{temperature_j},'
                f'"traceId":{t_j}}}\n')

    return line


def verdict_obj(output: dict[str, Any], criterion_id: str, trace_id: str) -> dict[str, Any]:
    """The verdict record of a validated reply: exactly ``to_verdict(...).to_json_obj()``, without pydantic.

    The cache replays thousands of verdicts a second through this; a test holds it equal to ``to_verdict``.
    """
    verdict = {"criterionId": criterion_id, "traceId": trace_id, "result": output["result"],
               "confidence": float(output["confidence"]), "critique": output["critique"],
               "refs": output["refs"], "assumptions": output["assumptions"]}
    if output.get("blockedBy") is not None:
        verdict["blockedBy"] = output["blockedBy"]
    return verdict
