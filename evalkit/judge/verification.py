"""The independent verifier: after the judge decides, a distinct reviewer checks that the evidence it cited
entails its verdict (the seed's GA-5: "a DISTINCT reviewer re-resolves your refs and checks claim |= verdict.
On a dead ref or an inferential leap it downgrades pass/fail -> uncertain(blockedBy): downgrade-only; it
never flips pass<->fail and never fixes").

Three modes (``--verify``): ``none`` keeps the judge's verdicts as they are; ``refs`` re-resolves every ref
against the trace (:func:`evalkit.judge.grounding.verify_verdict`, no call); ``llm`` does that, then asks a
verifier model about every verdict still ``pass`` or ``fail``. The verifier prompt holds the criterion and
its definitions, the verdict, the critique and each ref with the text found at its place; the reply says
whether that evidence supports the verdict and, when not, names the premise it lacks. It never sees the
judge's prompt, so it cannot simply agree with it, and it is never asked what the verdict should be.

Its calls go the way the judge's do: retries and one correction (:func:`evalkit.judge.calls.judge_once`),
replies in the run's cache (keyed by the verifier's provider, model and prompt digest), each reply journaled
as it lands (``OUT.verify.journal.jsonl``: a killed run resumes without paying twice), and its tokens and
cost counted in the run's. A verdict the verifier could not answer for (an error, the budget spent) is
not verified, so it is downgraded too, saying why: an unverified pass is not a pass. ``OUT.verify.jsonl``
records every verification (who, cost, what it found, the result before and after).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from evalkit.contracts.judge import JudgeSpec, VerifierOutput
from evalkit.contracts.judge_run import JudgeVerifyRecord
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import BlockedBy, CriterionVerdict, Ref
from evalkit.errors import InputError
from evalkit.io.canonical import canonical_line, compact_sorted_json
from evalkit.judge.asking import Asker, AskSummary
from evalkit.judge.cache import JudgeCache
from evalkit.judge.calls import RetryPolicy, reply_body
from evalkit.judge.cost import PriceTable
from evalkit.judge.grounding import downgrade, resolve_ref
from evalkit.judge.output import KINDS, closed_schema
from evalkit.judge.prompt import prompt_digest
from evalkit.trace_paths import MISSING, normalize_exact, parse_path, step_into, texts_of

VERIFY_MODES = ("none", "refs", "llm")
"""What checks a verdict after the judge: nothing, its refs (no call), or its refs and the LLM verifier."""

CONTEXT_CHARS = 600
"""Characters of a ref's field the verifier is shown around the cited value."""

VERIFIER_OUTPUT_SCHEMA: dict[str, Any] = closed_schema({
    "assessment": {"type": "string", "description": "Your reasoning, written before you answer: what the cited "
                   "evidence establishes, and whether the verdict follows from it under the definitions."},
    "supported": {"type": "boolean", "description": "true only when the evidence as found entails the verdict."},
    "blockedBy": {"anyOf": [closed_schema({
        "kind": {"type": "string", "enum": KINDS},
        "text": {"type": "string", "description": "The premise the verdict needs that the evidence does not "
                 "establish, or the evidence that is not what the critique says."},
    }), {"type": "null"}], "description": "Required when supported is false, null otherwise."},
}, "The verifier's reply: assessment first, then whether the evidence supports the verdict.")
"""JSON Schema of :class:`~evalkit.contracts.judge.VerifierOutput` (strict-mode friendly, like the judge's)."""

SYSTEM = """You are a verifier. A judge (not you) decided one binary criterion on one agent trace and cited \
evidence for its verdict. You check one thing: whether the evidence it cited, as found in the trace, entails \
its verdict under the criterion's definitions.

- A sourced claim proves the claim, never the verdict. If getting from the evidence to the verdict needs a \
premise the evidence does not establish (an inferential leap), the verdict is not supported.
- If a cited value is not what the critique says it is, or the place it was found says something else, the \
verdict is not supported.
- An absence ("never", "did not") needs a cited field that shows the absence, not silence.
- You do not decide the criterion yourself, you do not propose another verdict, and you do not repair the \
critique. Supported or not supported, nothing else.

Reply with one JSON object: assessment (your reasoning, first), supported (true or false), blockedBy (when \
not supported: kind factual-intent, normative or scope, and text naming the premise the verdict lacks; null \
when supported).
Schema: """ + compact_sorted_json(VERIFIER_OUTPUT_SCHEMA)


class VerifyPrompt(NamedTuple):
    """The verifier's prompt for one verdict."""

    criterion_id: str
    trace_id: str
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    digest: str


def _found(trace: Trace, ref: Ref) -> str:
    """The text at a ref's place, cut to :data:`CONTEXT_CHARS` around the cited value (or why there is none)."""
    resolution = resolve_ref(trace, ref)
    if not resolution:
        return f"(not found: {resolution.reason})"
    on_disk = trace.to_json_obj()
    roots = [on_disk] if ref.obs == trace.id else [
        raw for o, raw in zip(trace.observations, on_disk["observations"], strict=True) if ref.obs in (o.id, o.name)]
    cited = normalize_exact(ref.value)
    for root in roots:
        value = root
        for step in parse_path(ref.path):
            value = step_into(value, step)
            if value is MISSING:
                break
        if value is MISSING:
            continue
        for text in texts_of(value):
            written = normalize_exact(text)
            at = written.find(cited)
            if at >= 0:
                start = max(0, at - (CONTEXT_CHARS - len(cited)) // 2)
                window = written[start:start + max(CONTEXT_CHARS, len(cited))]
                return ("..." if start else "") + window + ("..." if start + len(window) < len(written) else "")
    return "(found)"


def verifier_prompt(verdict: CriterionVerdict, trace: Trace, spec: JudgeSpec | None) -> VerifyPrompt:
    """The verifier's prompt: the criterion and definitions, the verdict, the critique, each ref as found."""
    lines = [f"Criterion ({verdict.criterion_id}):", spec.criterion if spec else "(its text is not at hand)"]
    if spec is not None:
        lines += [f"PASS: {spec.pass_definition}", f"FAIL: {spec.fail_definition}"]
    lines += ["", f"The judge's verdict: {verdict.result.upper()}",
              f"The judge's critique: {verdict.critique or '(none)'}", "",
              "The evidence it cited, each looked up again in the trace:"]
    for i, ref in enumerate(verdict.refs or [], start=1):
        lines.append(f"{i}. at {ref.obs} {ref.path or '(the whole observation)'}, cited: "
                     f"{compact_sorted_json(ref.value)}")
        lines.append(f"   the field reads: {_found(trace, ref)}")
    if not verdict.refs:
        lines.append("(none)")
    lines += ["", "Does this evidence, as found, entail the verdict?"]
    messages = ({"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)})
    return VerifyPrompt(verdict.criterion_id, verdict.trace_id, messages, VERIFIER_OUTPUT_SCHEMA,
                        prompt_digest(messages, VERIFIER_OUTPUT_SCHEMA))


def parse_verifier_output(text: str) -> dict[str, Any]:
    """A verifier reply as a validated :class:`VerifierOutput` object.

    Raises:
        ValueError: not JSON, or not valid for the schema (the message says what to fix).
    """
    from pydantic import ValidationError

    from evalkit.contract_files import validation_problems

    body = reply_body(text)
    try:
        return VerifierOutput.model_validate_json(body).to_json_obj()
    except ValidationError as exc:
        path, message = validation_problems(exc)[0]
        raise ValueError(f"does not fit the schema: {path + ': ' if path else ''}{message}") from None


@dataclass
class VerifySummary:
    """What the verifier did over a run's verdicts; its calls, tokens and cost are its asker's."""

    checked: int = 0
    """Pass and fail verdicts the verifier was asked about (after the refs check)."""
    kept: int = 0
    downgraded: int = 0
    not_verified: int = 0
    """Downgraded because the verifier gave no answer (an error, the budget)."""
    asked: AskSummary = field(default_factory=AskSummary)
    records_path: Path | None = None

    calls = property(lambda self: self.asked.calls)
    cache_hits = property(lambda self: self.asked.cache_hits)
    resumed = property(lambda self: self.asked.resumed)
    input_tokens = property(lambda self: self.asked.input_tokens)
    output_tokens = property(lambda self: self.asked.output_tokens)
    cost_usd = property(lambda self: self.asked.cost_usd)
    unknown_cost_calls = property(lambda self: self.asked.unknown_cost_calls)

    def describe(self) -> str:
        cost = f"${self.cost_usd:.4f}" + (" + unknown" if self.unknown_cost_calls else "")
        return (f"verifier: {self.checked} pass/fail verdict(s) checked, {self.kept} kept, {self.downgraded} "
                f"downgraded to uncertain ({self.not_verified} of them not verified: no answer), {self.calls} "
                f"call(s), {self.cache_hits} cached, {self.resumed} resumed, "
                f"{self.input_tokens + self.output_tokens} tokens, cost {cost}")


def verifier_name(provider: Any) -> str:
    """How a verdict records the LLM verifier: ``llm PROVIDER/MODEL``."""
    return f"llm {provider.name}/{provider.model}"


async def verify_with_llm(verdicts: Iterable[CriterionVerdict], traces_by_id: Mapping[str, Trace],
                          specs: Mapping[str, JudgeSpec], provider: Any, *, journal: str | Path,
                          cache: JudgeCache | None = None, concurrency: int = 8, prices: PriceTable | None = None,
                          budget: float | None = None, retry: RetryPolicy | None = None,
                          ) -> tuple[list[CriterionVerdict], list[JudgeVerifyRecord], VerifySummary]:
    """Ask the verifier about every ``pass``/``fail`` verdict; downgrade-only (see the module docstring).

    Args:
        verdicts: the judge's verdicts, refs already checked (``uncertain`` ones are passed through).
        traces_by_id: the traces the verdicts are about.
        specs: judge specs by criterion id (their criterion text and definitions go in the prompt).
        provider: the verifier (any judge provider; the judge's by default, ``--verifier-model`` another).
        journal: the verifier journal to append to and resume from.
        cache: the run's reply cache, shared with the judge (keys differ: another prompt and provider pin).
        concurrency: verifier calls in flight at most.
        prices: the price table; the built-in one by default.
        budget: USD the verifier may spend; a call starts only when what it may cost fits what is left, and the
            verdicts left are not verified.
        retry: the retry policy.

    Returns:
        The verdicts (same order), one record per verification, and the summary.
    """
    asker = Asker(provider, journal=journal, kind="verifierJournal", noun="verifier", parse=parse_verifier_output,
                  cache=cache, concurrency=concurrency, prices=prices, budget=budget, retry=retry)
    summary = VerifySummary()
    by = verifier_name(provider)
    given = list(verdicts)

    async def one(verdict: CriterionVerdict) -> tuple[CriterionVerdict, JudgeVerifyRecord | None]:
        if verdict.result == "uncertain":
            return verdict, None
        trace = traces_by_id.get(verdict.trace_id)
        if trace is None:
            raise InputError(f"verdict on trace {verdict.trace_id!r}, which is not among the traces given")
        prompt = verifier_prompt(verdict, trace, specs.get(verdict.criterion_id))
        summary.checked += 1
        got = await asker.ask(prompt, label=f"verify\0{prompt.criterion_id}\0{prompt.trace_id}")
        after = _apply(verdict, got.output, got.error, by)
        if after.result == "uncertain":
            summary.downgraded += 1
            summary.not_verified += got.output is None
        else:
            summary.kept += 1
        record = JudgeVerifyRecord(
            criterion_id=verdict.criterion_id, trace_id=verdict.trace_id, verified_by=by, provider=provider.name,
            model=provider.model, temperature=float(provider.temperature), prompt_digest=prompt.digest,
            was=verdict.result, result=after.result,
            supported=None if got.output is None else got.output["supported"], reason=after.verify_reason,
            input_tokens=got.tokens[0], output_tokens=got.tokens[1], attempts=got.attempts, cached=got.cached,
            cost_usd=got.cost, error=got.error)
        return after, record

    try:
        results = await asyncio.gather(*(one(v) for v in given))
    finally:
        asker.close()
    summary.asked = asker.summary
    records = sorted((r for _, r in results if r is not None), key=lambda r: (r.criterion_id, r.trace_id))
    return [v for v, _ in results], records, summary


def _apply(verdict: CriterionVerdict, output: dict[str, Any] | None, error: str | None, by: str) -> CriterionVerdict:
    """The verdict after the verifier's answer: kept (saying who verified it and why) or downgraded."""
    if output is None:
        why = error or "the verifier gave no answer"
        return downgrade(verdict, BlockedBy(kind="scope", text=f"not verified: {why}"), by=by,
                         reason=f"not verified: {why}", independent=False)
    if output["supported"]:
        return verdict.model_copy(update={"verified_by": by, "verify_reason": output["assessment"],
                                          "independent_verify": True})
    gap = BlockedBy.model_validate(output["blockedBy"])
    return downgrade(verdict, gap, by=by, reason=f"{gap.text} ({output['assessment']})", independent=True)


def read_verdict_lines(path: Path) -> list[CriterionVerdict]:
    """The verdicts of a run's output file, in file order."""
    from evalkit.contract_files import read_models

    return read_models(path, CriterionVerdict) if path.stat().st_size else []


def verify_paths(out: Path) -> tuple[Path, Path]:
    """``(records, journal)`` of the verifier beside the verdicts file ``out``."""
    stem = out.name[:-len(".jsonl")] if out.name.endswith(".jsonl") else out.name
    return out.with_name(f"{stem}.verify.jsonl"), out.with_name(f"{stem}.verify.journal.jsonl")


def verify_run(out: str | Path, traces_by_id: Mapping[str, Trace], specs: Mapping[str, JudgeSpec], provider: Any,
               *, cache: JudgeCache | None = None, concurrency: int = 8, prices: PriceTable | None = None,
               budget: float | None = None, retry: RetryPolicy | None = None,
               close_provider: bool = True) -> VerifySummary:
    """Verify a judge run's verdicts file with the LLM verifier, in place: the verdicts are rewritten
    (atomically, same order, downgrades only) and ``OUT.verify.jsonl`` records each verification. The
    runs sidecar keeps what the judge itself answered. The provider is closed at the end (a provider of its
    own: the judge run closes the judge's).

    Raises:
        InputError: a verdict on a trace not given, or a verifier journal of another verifier.
    """
    from evalkit.io.atomic import atomic_write_text
    from evalkit.judge.runner import run_coroutine

    out = Path(out)
    records_path, journal = verify_paths(out)
    verdicts = read_verdict_lines(out)

    async def run() -> tuple[list[CriterionVerdict], list[JudgeVerifyRecord], VerifySummary]:
        try:
            return await verify_with_llm(verdicts, traces_by_id, specs, provider, journal=journal, cache=cache,
                                         concurrency=concurrency, prices=prices, budget=budget, retry=retry)
        finally:
            if close_provider:
                await provider.aclose()

    after, records, summary = run_coroutine(run())
    atomic_write_text(out, "".join(canonical_line(v.to_json_obj()) for v in after))
    atomic_write_text(records_path, "".join(canonical_line(r.to_json_obj()) for r in records))
    summary.records_path = records_path
    return summary
