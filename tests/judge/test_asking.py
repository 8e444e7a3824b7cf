"""The Asker's own rules: a prompt that cannot fit the model's context gets no call; a journal is optional."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evalkit.judge import Asker, ScriptedProvider, prompt_digest, run_coroutine
from evalkit.judge.providers.tokens import TokenCounter

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@dataclass(frozen=True)
class Prompt:
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any]
    digest: str


def _prompt(text: str) -> Prompt:
    messages = ({"role": "user", "content": text},)
    return Prompt(messages, SCHEMA, prompt_digest(list(messages), SCHEMA))


def test_a_prompt_over_the_context_gets_no_call_and_says_why_and_one_that_fits_is_asked():
    provider = ScriptedProvider([json.dumps({"ok": True})])
    asker = Asker(provider, journal=None, kind="testJournal", noun="test", parse=json.loads,
                  counter=TokenCounter(), context=1100)  # the reply's cap is 1,024: about 70 tokens of prompt fit
    long, short = run_coroutine(asker.ask(_prompt("word " * 400), label="long")), \
        run_coroutine(asker.ask(_prompt("Is it fine?"), label="short"))
    assert long.output is None and "does not fit the model's context" in long.error
    assert short.output == {"ok": True} and len(provider.calls) == 1
    assert asker.summary.errors == 1 and asker.summary.calls == 1


def test_a_per_prompt_reader_checks_that_prompts_reply(tmp_path):
    provider = ScriptedProvider([json.dumps({"ok": False}), json.dumps({"ok": True})])
    asker = Asker(provider, journal=tmp_path / "j.jsonl", kind="testJournal", noun="test", parse=json.loads)

    def must_be_ok(text: str) -> dict[str, Any]:
        out = json.loads(text)
        if not out["ok"]:
            raise ValueError("says ok is false")
        return out

    answer = run_coroutine(asker.ask(_prompt("Is it fine?"), label="one", parse=must_be_ok))
    asker.close()
    assert answer.output == {"ok": True} and answer.attempts == 2  # the first reply sent back once
