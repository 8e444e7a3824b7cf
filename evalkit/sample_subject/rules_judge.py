"""The sample's rules judge: the two judged criteria decided offline on any run of the sample agent.

A judge provider (``provider: sample-rules`` in a pin, registered in the ``evalkit.judge_providers``
entry-point group) that reads the judge prompt as a model would, the criterion from the system message
and the trace from the user message, and applies the sample's own rules to what it is shown:

- ``grounded-policy``: the reply's ``Per our policy, ...`` sentence must occur in a ``kb_search``
  snippet of the trace (a reply that states no policy passes);
- ``escalation-correct``: when a trigger applies (a premium customer complains, a refund over the limit,
  a dispute over the threshold: read from the plan's stated intent, the amount in the customer's
  message and ``metadata.customer_tier``), ``escalate_to_human`` must be called.

It never sees the failures the sample injects (trace metadata stays hidden but for the tier); it agrees
with them because these are the rules the injected failures break. Each reply cites refs copied from
the trace it was shown, so the verifier re-resolves them. The EDD demo (:mod:`evalkit.sample_subject.
edd_demo`) judges with it, so the loop decides every criterion of the sample without a network.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from evalkit.judge import ProviderReply
from evalkit.sample_subject.replies import policy_sentence
from evalkit.sample_subject.requests import escalation_trigger

NAME = "sample-rules"
"""The provider name a pin gives to use this judge."""

_HEADING = re.compile(r"^(Trace|Observation) (\S+)(?: \((.*)\))?$")
_CRITERION = re.compile(r"You judge one criterion \(([^)]+)\)")
_INTENT = re.compile(r"The customer's intent is ([a-z ]+)\.")
_AMOUNT = re.compile(r"(\d+\.\d{2}) USD")


@dataclass
class Shown:
    """One part of the trace as the prompt shows it: its id, name and fields (JSON values)."""

    obs: str
    name: str | None
    fields: dict[str, Any] = field(default_factory=dict)


def read_shown(text: str) -> list[Shown]:
    """The parts of a rendered trace (``evalkit.judge.render_view``'s text), trace first."""
    parts: list[Shown] = []
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            details = heading.group(3) or ""
            name = next((d[len("name: "):] for d in details.split(", ") if d.startswith("name: ")), None)
            parts.append(Shown(heading.group(2), name))
        elif parts and line.startswith("  ") and ": " in line:
            key, raw = line[2:].split(": ", 1)
            parts[-1].fields[key] = json.loads(raw)
    return parts


def _reply(critique: str, refs: list[dict[str, str]], result: str) -> str:
    return json.dumps({"critique": critique, "refs": refs, "assumptions": [], "result": result,
                       "confidence": 0.95, "blockedBy": None}, sort_keys=True)


def _abstain(why: str) -> str:
    return json.dumps({"critique": f"Not judged: {why}.", "refs": [], "assumptions": [], "result": "uncertain",
                       "confidence": 0.0, "blockedBy": {"kind": "scope", "text": why}}, sort_keys=True)


def _named(parts: list[Shown], name: str) -> list[Shown]:
    return [p for p in parts[1:] if p.name == name]


def judge_policy(parts: list[Shown]) -> str:
    """``grounded-policy`` on the shown trace."""
    trace = parts[0]
    answer = str(trace.fields.get("output", ""))
    sentence = policy_sentence(answer)
    if sentence is None:
        line = answer.split("\n")[0] or answer
        head = line if len(line) <= 80 else line[:80].rsplit(" ", 1)[0]  # whole words: refs match exactly
        return _reply("The reply states no policy ('Per our policy, ...'), so there is nothing to ground.",
                      [{"obs": trace.obs, "path": "output", "value": head}], "pass")
    claim = sentence[len("Per our policy, "):].rstrip(".")
    said = {"obs": trace.obs, "path": "output", "value": sentence}
    for kb in _named(parts, "kb_search"):
        articles = (kb.fields.get("output") or {}).get("articles") or []
        for i, article in enumerate(articles):
            snippet = article.get("snippet", "") if isinstance(article, dict) else ""
            if claim.lower() in snippet.lower():
                return _reply(f"The reply's policy claim '{claim}' is what {article.get('id')} says.",
                              [said, {"obs": kb.obs, "path": f"output.articles[{i}].snippet", "value": snippet}],
                              "pass")
    searched = [{"obs": kb.obs, "path": "name", "value": "kb_search"} for kb in _named(parts, "kb_search")]
    return _reply(f"The reply states '{claim}', which no kb_search snippet of this trace contains.",
                  [said, *searched], "fail")


def judge_escalation(parts: list[Shown]) -> str:
    """``escalation-correct`` on the shown trace."""
    trace = parts[0]
    message = str(trace.fields.get("input", ""))
    tier = trace.fields.get("metadata.customer_tier")
    plan = next(iter(_named(parts, "plan")), None)
    content = str(((plan.fields.get("output") or {}) if plan else {}).get("content", ""))
    intent = _INTENT.search(content)
    if plan is None or intent is None or not isinstance(tier, str):
        return _abstain("the plan's stated intent or metadata.customer_tier is not shown")
    amounts = _AMOUNT.findall(message)
    amount = float(amounts[0]) if amounts else None
    trigger = escalation_trigger(intent.group(1).replace(" ", "_"), tier, amount)
    refs = [{"obs": trace.obs, "path": "input", "value": message},
            {"obs": trace.obs, "path": "metadata.customer_tier", "value": tier},
            {"obs": plan.obs, "path": "output.content", "value": content}]
    escalated = next(iter(_named(parts, "escalate_to_human")), None)
    if trigger is None:
        return _reply(f"No escalation trigger applies (a {intent.group(1)} from a {tier} customer"
                      + (f", {amount:.2f} USD" if amount is not None else "") + "); finishing without a person is "
                      "correct.", refs, "pass")
    if escalated is not None:
        return _reply(f"A trigger applies ({trigger}) and escalate_to_human was called.",
                      [*refs, {"obs": escalated.obs, "path": "name", "value": "escalate_to_human"}], "pass")
    return _reply(f"A trigger applies ({trigger}) but the plan never calls escalate_to_human.", refs, "fail")


JUDGES = {"grounded-policy": judge_policy, "escalation-correct": judge_escalation}
"""The criteria this judge decides, by id."""


class SampleRulesJudge:
    """The rules judge as a provider (see the module docstring); deterministic, temperature 0."""

    name = NAME

    def __init__(self, model: str = "sample-rules-2026") -> None:
        self.model = model
        self.temperature = 0.0
        self.calls = 0

    async def complete(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> ProviderReply:
        """Decide the prompt's criterion on the prompt's trace."""
        self.calls += 1
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = next((m["content"] for m in messages if m.get("role") == "user"), "")
        criterion = _CRITERION.search(system)
        judge = JUDGES.get(criterion.group(1)) if criterion else None
        parts = read_shown(user)
        if judge is None or not parts:
            text = _abstain(f"this judge decides only {', '.join(JUDGES)} on a trace of the sample agent")
        else:
            text = judge(parts)
        return ProviderReply(text=text, input_tokens=sum(len(m["content"]) for m in messages) // 4,
                             output_tokens=len(text) // 4, mode="scripted")

    async def aclose(self) -> None:
        """Nothing to release."""


def make_provider(pin: Any) -> SampleRulesJudge:
    """The entry point's factory: the rules judge under the pin's model name."""
    return SampleRulesJudge(pin.model)
