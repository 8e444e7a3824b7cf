"""`evalkit dataset generate`: a model writes cases for the tuples the suite lacks, through the judge's providers,
cache and journal; near-duplicates are dropped and named; coverage before and after; nothing enters the suite
without a merge."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli.main import main
from evalkit.judge import ScriptedProvider
from evalkit.suite import generate_cases, read_dataset, uncovered_tuples
from tests.judge.servers import JudgeServer

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A copy of the sample's subject files whose suite keeps only its 5 seed cases: 15 tuples missing."""
    folder = tmp_path / "sample"
    folder.mkdir()
    for name in ("subject.yaml", "dataset.json", "failure-modes.yaml", "eval-matrix.yaml", "writer-cassette.jsonl",
                 "traces.jsonl", "human-labels.jsonl", "criterion-verdicts.jsonl", "expected-flow.json",
                 "behavior-tree.json", "annotations.jsonl", "agent-spec.yaml", "criterion-verdicts.prompt-v1.jsonl",
                 "criterion-verdicts.prompt-v2.jsonl", "draft-modes.yaml"):  # the subject's notebook 01 parameter
        shutil.copy(SAMPLE / name, folder / name)
    suite = json.loads((folder / "dataset.json").read_text())
    suite["cases"] = [c for c in suite["cases"] if c["source"] == "seed"]
    (folder / "dataset.json").write_text(json.dumps(suite))
    return folder / "subject.yaml"


def _words(text: str) -> str:
    """Words no other text shares: messages that cannot be near-duplicates of each other."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return " ".join(digest[i:i + 6] for i in range(0, 36, 6))


def _reply(queries: list[str], modes: list[str] | None = None) -> str:
    return json.dumps({"cases": [{"query": q, "expected": "Looks the order up first.",
                                  "failureModes": modes or []} for q in queries]})


def test_the_replay_cassette_fills_every_missing_tuple_of_the_sample(sample, capsys):
    suite = sample.parent / "dataset.json"
    before = suite.read_bytes()
    missing = uncovered_tuples(read_dataset(suite).dimensions, [c.tuple for c in read_dataset(suite).cases])
    assert len(missing) == 15
    code = main(["dataset", "generate", str(sample), "--missing", "--provider", "replay", "--cassette",
                 str(sample.parent / "writer-cassette.jsonl")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "15 missing tuple(s): 15 call(s)" in out
    assert "coverage: tuples 5/20, failure modes 0/4 -> tuples 20/20, failure modes 4/4" in out
    assert suite.read_bytes() == before                              # nothing enters without a merge
    generated = [json.loads(line) for line in (sample.parent / "dataset.generated.jsonl").read_text().splitlines()]
    assert {json.dumps(c["tuple"], sort_keys=True) for c in generated} == \
        {json.dumps(t, sort_keys=True) for t in missing}
    first = generated[0]
    assert first["source"] == "synthetic" and first["origin"]["model"] == "sim-writer-2026-01"
    assert first["origin"]["promptDigest"].startswith("sha256:") and first["origin"]["tuple"] == first["tuple"]
    assert first["expected"]["behaviour"] and first["expected"]["failureModes"]
    assert main(["dataset", "merge", str(sample), str(sample.parent / "dataset.generated.jsonl")]) == 0
    assert f"{len(generated)} added, 0 already in the suite, 0 near-duplicates dropped; version 2" in \
        capsys.readouterr().out
    assert main(["dataset", "check", str(sample)]) == 0
    capsys.readouterr()
    assert main(["dataset", "expand", str(sample), "--missing"]) == 0
    assert capsys.readouterr().out == ""                             # every tuple realised now


def test_a_copy_without_a_seed_asks_prompts_the_cassette_lacks_and_says_so(sample, capsys):
    suite = json.loads((sample.parent / "dataset.json").read_text())
    suite["cases"] = suite["cases"][1:]                              # every prompt shows the seeds: now other prompts
    (sample.parent / "dataset.json").write_text(json.dumps(suite))
    code = main(["dataset", "generate", str(sample), "--missing", "--provider", "replay", "--cassette",
                 str(sample.parent / "writer-cassette.jsonl")])
    err = capsys.readouterr().err
    assert code == 3
    assert "16 tuple(s) still missing: " in err and "; and 11 more" in err    # all counted, five named
    assert "replies to the exact prompts it was recorded with" in err and "seed cases" in err
    assert not (sample.parent / "dataset.generated.jsonl").exists() or \
        (sample.parent / "dataset.generated.jsonl").read_text() == ""


def test_the_prompt_shows_dimensions_modes_criteria_and_seed_examples(sample):
    provider = ScriptedProvider(lambda messages, schema, i: _reply([f"Message: {_words(str(i))}"]))
    done = generate_cases(sample, provider, n=2)
    system, user = provider.calls[0][0]
    assert user["content"] == "Tuple: intent=refund_request, customer_tier=standard, channel=email. Write 2 cases."
    text = system["content"]
    assert "- customer_tier: The customer's membership tier. Values: standard, premium." in text
    assert "- missed-escalation (Missed escalation): The case meets an escalation trigger" in text
    assert "- escalation-correct: The agent escalates to a human exactly when" in text     # a judged criterion
    assert "order-id-matches" not in text                                                   # a code check
    assert text.count("channel=chat, customer_tier=standard, intent=") == 5                 # the 5 seeds
    schema = provider.calls[0][1]
    item = schema["properties"]["cases"]["items"]
    assert item["required"] == ["expected", "failureModes", "query"]
    assert item["properties"]["failureModes"]["items"]["enum"][0] == "hallucinated-policy"
    assert done.generated[0].origin.prompt_digest == done.asked[0].digest


def test_near_duplicates_are_dropped_and_named_and_merge_says_what_it_merged(sample, capsys):
    seed_query = next(c.query for c in read_dataset(sample.parent / "dataset.json").cases
                      if c.tuple["intent"] == "order_status")

    def script(messages, schema, i):
        if "intent=order_status" in messages[1]["content"]:   # one near-copy of a seed, two copies of each other
            late = f"Where is parcel ORD-2026-000111, it is late {_words(messages[1]['content'])}"
            return _reply([seed_query + " Thanks!", late, late + "!"], ["wrong-tool-args"])
        return _reply([f"A fresh message: {_words(messages[1]['content'])}"])

    done = generate_cases(sample, ScriptedProvider(script), merge_into_suite=True)
    dropped = {d.case.query: d for d in done.merged.near_duplicates}
    assert seed_query + " Thanks!" in dropped and dropped[seed_query + " Thanks!"].similarity >= 0.8
    assert sum(q.endswith("!") and "parcel" in q for q in dropped) == 3     # one per order_status tuple
    assert done.merged_into_suite and read_dataset(sample.parent / "dataset.json").version == 2
    assert done.before.modes == [] and done.after.modes == ["wrong-tool-args"]
    assert done.after.tuples == 20 and not done.still_missing


def test_an_invalid_reply_is_sent_back_once_then_its_tuple_is_still_missing(sample, capsys):
    calls: list[int] = []

    def script(messages, schema, i):
        calls.append(i)
        if "intent=complaint" in messages[1]["content"] and "premium" in messages[1]["content"]:
            return json.dumps({"cases": [{"query": "x", "expected": "y", "failureModes": ["rudeness"]}]})
        return _reply([f"Realistic message: {_words(messages[1]['content'])}"])

    done = generate_cases(sample, ScriptedProvider(script), n=1)
    broken = [t for t in done.errors]
    assert len(broken) == 2 and all("customer_tier=premium" in t and "intent=complaint" in t for t in broken)
    assert "failureModes: must list ids among" in done.errors[broken[0]]
    assert len(done.still_missing) == 2 and len(calls) == 13 + 2 * 2  # each broken tuple: the call and one correction


def test_a_rerun_replays_from_the_journal_and_a_cache_makes_calls_free(sample, tmp_path):
    def script(messages, schema, i):
        return _reply([f"Message: {_words(messages[1]['content'])}"])

    cache = tmp_path / "replies.sqlite"
    first = generate_cases(sample, ScriptedProvider(script), n=1, cache=cache)
    assert first.summary.calls == 15
    never = ScriptedProvider([])                          # any call fails the test
    again = generate_cases(sample, never, n=1, cache=cache)
    assert again.summary.resumed == 15 and again.summary.calls == 0
    assert [c.id for c in again.merged.added] == [c.id for c in first.merged.added]
    elsewhere = generate_cases(sample, never, n=1, cache=cache, out=tmp_path / "other.jsonl")  # a new journal
    assert elsewhere.summary.cache_hits == 15 and elsewhere.summary.calls == 0


@pytest.mark.slow
def test_an_openai_compatible_server_writes_the_cases_over_http(sample, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    server = JudgeServer(script=lambda messages: _reply([f"Over HTTP: {_words(messages[-1]['content'])}"])).start()
    try:
        code = main(["dataset", "generate", str(sample), "--missing", "--n", "1", "--provider", "openai",
                     "--model", "writer-test", "--base-url", server.url, "--merge"])
    finally:
        server.stop()
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(server.requests) == 15 and "merged into the suite: 15 added" in out
    origins = {c.origin.model for c in read_dataset(sample.parent / "dataset.json").cases if c.origin}
    assert origins == {"writer-test"}


def test_a_live_provider_needs_a_model(sample, capsys):
    assert main(["dataset", "generate", str(sample), "--missing", "--provider", "openai"]) == 1
    assert "no model named for the openai writer: pass --model" in capsys.readouterr().err


def test_two_runs_never_write_one_journal_at_once(sample):
    from evalkit.errors import InputError
    from evalkit.judge import Asker

    journal = sample.parent / "dataset.generated.journal.jsonl"
    def script(messages, schema, i):
        return _reply([f"Message: {_words(messages[1]['content'])}"])

    holder = Asker(ScriptedProvider(script), journal=journal, kind="generatorJournal", noun="case generator", parse=json.loads)
    with pytest.raises(InputError, match="another judge run is writing this journal"):
        generate_cases(sample, ScriptedProvider(script), n=1)
    holder.close()
    assert generate_cases(sample, ScriptedProvider(script), n=1).still_missing == []
    assert not journal.with_name(journal.name + ".lock").exists()       # the lock goes with the run


def test_a_suite_that_realises_every_tuple_asks_nothing_and_writes_nothing(sample, capsys):
    suite = json.loads((SAMPLE / "dataset.json").read_text())
    (sample.parent / "dataset.json").write_text(json.dumps(suite))       # the sample's own: all 20 tuples
    assert main(["dataset", "generate", str(sample), "--missing", "--provider", "replay", "--cassette",
                 str(sample.parent / "writer-cassette.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "0 missing tuple(s): 0 call(s)" in out and "every tuple is realised by a case already" in out
    assert not list(sample.parent.glob("dataset.generated*"))           # no empty file, no journal
