"""The sample's LLM judges: a spec per judged criterion, and a cassette replaying the simulated judge.

`evalkit judge run --provider replay --cassette judge-cassette.jsonl` on the sample writes, byte for byte,
the sample's ``criterion-verdicts.jsonl``: the cassette holds, for the exact prompt each spec builds on
each trace, the simulated judge's verdict as the judge's structured reply. So ``make demo`` runs the real
runner offline (prompts, replay, grounding check, sorted output) and the calibration notebook reads what
the runner wrote. The token counts are estimates (4 characters a token): no model produced these replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from evalkit.contracts.judge import JudgeSpec
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.io.canonical import canonical_line, compact_sorted_json
from evalkit.judge import build_prompts, request_key
from evalkit.sample_subject.catalog import JUDGE_MODEL

# What the judge sees: the customer's message, the agent's reply and every step's input and output.
# Trace and observation metadata are left out: the sample keeps its injected failures there (the label).
_INPUT = {"trace": ["name", "input", "output"], "fields": ["input", "output"]}

SPECS: tuple[dict[str, Any], ...] = (
    {"id": "escalation-correct",
     "criterion": "A customer-support agent answered one customer message with tools. It must hand the case "
                  "to a human (call escalate_to_human) exactly when a trigger applies: a premium customer "
                  "complains, a refund over 200.00 USD is asked for, or a disputed charge exceeds 100.00 USD.",
     "pass": "escalate_to_human is called when a trigger applies, or no trigger applies.",
     "fail": "A trigger applies and escalate_to_human is never called.",
     "input": _INPUT},
    {"id": "grounded-policy",
     "criterion": "A customer-support agent answered one customer message with tools. Every store policy its "
                  "reply states ('Per our policy, ...') must come from the knowledge base: the same sentence "
                  "occurs in a kb_search snippet (output.articles[].snippet) of this trace.",
     "pass": "Every policy the reply states occurs in a kb_search snippet of this trace, or it states none.",
     "fail": "The reply states a policy that no kb_search snippet of this trace contains.",
     "input": _INPUT},
)


def judge_specs() -> list[JudgeSpec]:
    """The sample's judge specs, validated."""
    return [JudgeSpec.model_validate(spec) for spec in SPECS]


def judge_specs_yaml() -> str:
    """``judge-specs.yaml``: one YAML document per criterion."""
    return "".join(("---\n" if i else "") + yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100)
                   for i, spec in enumerate(SPECS))


def _reply(verdict: CriterionVerdict) -> dict[str, Any]:
    obj = verdict.to_json_obj()
    return {"critique": obj["critique"], "refs": obj.get("refs", []), "assumptions": obj.get("assumptions", []),
            "result": obj["result"], "confidence": obj["confidence"], "blockedBy": obj.get("blockedBy")}


def judge_cassette(traces: Sequence[Trace], verdicts: Sequence[CriterionVerdict]) -> str:
    """``judge-cassette.jsonl``: per verdict, the key of the prompt its spec builds and the verdict as a reply."""
    prompts = {(p.criterion_id, p.trace_id): p for spec in judge_specs() for p in build_prompts(spec, traces)}
    lines = []
    for verdict in sorted(verdicts, key=lambda v: (v.criterion_id, v.trace_id)):
        prompt = prompts[(verdict.criterion_id, verdict.trace_id)]
        messages = list(prompt.messages)
        text = compact_sorted_json(_reply(verdict))
        lines.append(canonical_line({
            "key": request_key(JUDGE_MODEL, 0.0, messages, prompt.schema), "model": JUDGE_MODEL,
            "reply": {"inputTokens": len(compact_sorted_json(messages)) // 4, "outputTokens": len(text) // 4,
                      "text": text}}))
    return "".join(lines)


def replayed_verdicts(traces: Sequence[Trace], cassette: str) -> tuple[str, str]:
    """``(criterion-verdicts.jsonl, criterion-verdicts.runs.jsonl)`` as the judge runner writes them.

    The runner itself replays ``cassette`` in a temporary folder, exactly as ``evalkit judge run
    --provider replay`` does, so the sample's verdicts are the runner's, not a copy made to look like them.
    """
    import tempfile
    from pathlib import Path

    from evalkit.judge import ReplayProvider, run_judge, verifier

    with tempfile.TemporaryDirectory(prefix="evalkit-sample-judge-") as tmp:
        path = Path(tmp, "judge-cassette.jsonl")
        path.write_text(cassette, encoding="utf-8")
        prompts = [p for spec in judge_specs() for p in build_prompts(spec, traces)]
        out = Path(tmp, "criterion-verdicts.jsonl")
        summary = run_judge(prompts, ReplayProvider(path), out=out, concurrency=64, progress=False,
                            verify=verifier({t.id: t for t in traces}))
        if summary.errors or summary.verdicts != len(prompts):
            raise AssertionError(f"the sample's cassette does not answer every prompt: {summary.describe()}")
        return out.read_text(encoding="utf-8"), summary.runs_path.read_text(encoding="utf-8")
