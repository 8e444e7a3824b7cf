"""The bundled sample subject: reproducible, valid against every contract, and true to its ground truth."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from evalkit.analysis import modes_for_note, sample_traces
from evalkit.contracts.annotation import Annotation, Taxonomy
from evalkit.contracts.behavior_tree import BehaviorTree
from evalkit.contracts.dataset import Dataset
from evalkit.contracts.flow import ExpectedFlow
from evalkit.contracts.labels import HumanLabel
from evalkit.contracts.matrix import EvalMatrix
from evalkit.contracts.trace import Trace
from evalkit.contracts.verdict import CriterionVerdict
from evalkit.io import canonical_dumps, canonical_line, iter_jsonl_strict, read_json_strict
from evalkit.io.documents import read_document
from evalkit.sample_subject import build_sample, write_sample
from evalkit.sample_subject.__main__ import main
from evalkit.sample_subject.catalog import (
    FAILURE_MODES,
    FAILURE_RATES,
    JUDGE_TARGETS,
    POLICIES,
    REVIEW_MISS_RATE,
    REVIEWED_TRACES,
    SECOND_REVIEWER_TRACES,
)
from evalkit.sample_subject.specs import case_id

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "data" / "sample"
MIN_THREAD_LEN = 12  # mutagent's DEFAULT_MIN_THREAD_LEN: shorter values are not evidence of threading
ORDER_ID = re.compile(r"ORD-\d{4}-\d{6}")

JSONL_CONTRACTS = {"traces.jsonl": Trace, "human-labels.jsonl": HumanLabel,
                   "criterion-verdicts.jsonl": CriterionVerdict, "annotations.jsonl": Annotation}
DOC_CONTRACTS = {"eval-matrix.yaml": EvalMatrix, "dataset.json": Dataset, "expected-flow.json": ExpectedFlow,
                 "behavior-tree.json": BehaviorTree, "failure-modes.yaml": Taxonomy}


@pytest.fixture(scope="module")
def default_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample-default")
    write_sample(out, 7, 300)
    return out


def _traces(folder: Path) -> list[Trace]:
    return [Trace.model_validate(v) for _, v in iter_jsonl_strict(folder / "traces.jsonl")]


def _records(folder: Path, name: str) -> list[dict]:
    return [v for _, v in iter_jsonl_strict(folder / name)]


def _compact(value) -> str:
    """How the flow graph serialises an input: sorted-key compact JSON, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _slot_values(output) -> dict[str, str]:
    """The producer slots of an output: top-level keys, strings as-is, else sorted-key JSON; long ones only."""
    if not isinstance(output, dict):
        return {}
    values = {k: v if isinstance(v, str) else _compact(v) for k, v in output.items()}
    return {k: v.strip() for k, v in values.items() if len(v.strip()) >= MIN_THREAD_LEN}


def _by_name(trace: Trace, name: str):
    return [o for o in trace.observations if o.name == name]


def _later_inputs(trace: Trace, obs) -> str:
    index = trace.observations.index(obs)
    return "\n".join(_compact(o.input) for o in trace.observations[index + 1:] if o.has_input)


def _resolve(obj, path: str):
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        obj = obj[int(part[1:-1])] if part.startswith("[") else obj[part]
    return obj


def _rate_tolerance(p: float, n: int) -> float:
    return max(0.05, 3 * math.sqrt(p * (1 - p) / n))


@pytest.mark.slow
def test_two_generations_are_byte_identical(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["--out", str(a)]) == 0
    assert main(["--out", str(b)]) == 0
    printed = capsys.readouterr().out
    assert "wrote " in printed and "traces.jsonl (300 records" in printed
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert len(names) == 21  # + the judge (specs, cassette, runs sidecar), the case writer's and the drafter's cassettes, the draft
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_a_different_seed_gives_different_traces():
    one = {f.name: f.text for f in build_sample(7, 30)}
    other = {f.name: f.text for f in build_sample(8, 30)}
    assert one["traces.jsonl"] != other["traces.jsonl"]


@pytest.mark.slow
def test_module_entry_point_writes_a_small_run(tmp_path):
    out = tmp_path / "small"
    done = subprocess.run([sys.executable, "-m", "evalkit.sample_subject", "--out", str(out), "--seed", "3",
                           "--traces", "60"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "traces.jsonl (60 records" in done.stdout
    assert len(_traces(out)) == 60


def test_every_file_of_a_small_run_validates_against_its_contract(tmp_path):
    main(["--out", str(tmp_path), "--traces", "60"])
    for name, contract in JSONL_CONTRACTS.items():
        lines = (tmp_path / name).read_text(encoding="utf-8").splitlines(keepends=True)
        assert lines, name
        for line in lines:
            model = contract.model_validate(json.loads(line))
            assert canonical_line(model.to_json_obj()) == line, name
    for name, contract in DOC_CONTRACTS.items():
        model = contract.model_validate(read_document(tmp_path / name))
        if name.endswith(".json"):
            assert canonical_dumps(model.to_json_obj()) == (tmp_path / name).read_text(encoding="utf-8")
    subject = read_document(tmp_path / "subject.yaml")
    for key in ("traces", "labels", "verdicts", "eval_matrix", "dataset", "expected_flow", "behavior_tree",
                "annotations", "taxonomy"):
        assert (tmp_path / subject[key]).is_file(), key
    assert subject["judge"] == {"provider": "simulated", "model": "sim-judge-2026-01", "temperature": 0}
    assert subject["seed"] == 7
    verdicts = _records(tmp_path, "criterion-verdicts.jsonl")
    assert len(verdicts) == 2 * 60
    assert [(v["criterionId"], v["traceId"]) for v in verdicts] == sorted((v["criterionId"], v["traceId"])
                                                                          for v in verdicts)


@pytest.mark.slow
def test_traces_are_well_formed_trees(default_dir):
    traces = _traces(default_dir)
    assert [t.id for t in traces] == [f"tr-{n:04d}" for n in range(1, 301)]
    for t in traces:
        by_id = {o.id: o for o in t.observations}
        root = t.observations[0]
        assert (root.type, root.name, root.parent_id) == ("AGENT", "support-agent", None)
        assert {"intent", "customer_tier", "channel", "injected_failures"} <= set(t.metadata)
        for o in t.observations[1:]:
            parent = by_id[o.parent_id]
            assert parent.start_time <= o.start_time <= o.end_time <= parent.end_time, o.id
        for o in t.observations:
            assert datetime.fromisoformat(o.start_time) <= datetime.fromisoformat(o.end_time)
            if o.type == "GENERATION":
                assert o.model == "sim-gpt-4o-2026-01"
                assert o.usage["total"] == o.usage["input"] + o.usage["output"]
            if o.level == "ERROR":
                assert o.status_message and not o.has_output
        assert [o.name for o in t.observations if o.type == "GENERATION" and o.parent_id == root.id] == \
            ["plan", "respond"]
        for dispatch in _by_name(t, "dispatch_billing_agent"):
            children = [o for o in t.observations if o.parent_id == dispatch.id]
            assert [(c.type, c.name) for c in children] == [("AGENT", "billing-agent")]


def test_realised_failure_rates_are_near_the_targets(default_dir):
    traces = _traces(default_dir)
    truth = read_json_strict(default_dir / "ground-truth.json")
    for mode, target in FAILURE_RATES.items():
        row = truth["failureModes"][mode]
        injected = sum(1 for t in traces if mode in t.metadata["injected_failures"])
        assert row["injectedTraces"] == injected
        assert row["realisedRate"] == round(injected / row["applicableTraces"], 4)
        assert abs(row["realisedRate"] - target) <= _rate_tolerance(target, row["applicableTraces"]), mode
    verdicts = _records(default_dir, "criterion-verdicts.jsonl")
    failing = {c: {t.id for t in traces if truth["criteria"][c]["failureMode"] in t.metadata["injected_failures"]}
               for c in JUDGE_TARGETS}
    for criterion, (tpr, tnr) in JUDGE_TARGETS.items():
        mine = [v for v in verdicts if v["criterionId"] == criterion]
        assert len(mine) == 300
        decided = [v for v in mine if v["result"] != "uncertain"]
        pos = [v for v in decided if v["traceId"] not in failing[criterion]]
        neg = [v for v in decided if v["traceId"] in failing[criterion]]
        realised_tpr = sum(v["result"] == "pass" for v in pos) / len(pos)
        realised_tnr = sum(v["result"] == "fail" for v in neg) / len(neg)
        judge = truth["criteria"][criterion]["judge"]
        assert (judge["tprRealised"], judge["tnrRealised"]) == (round(realised_tpr, 4), round(realised_tnr, 4))
        assert abs(realised_tpr - tpr) <= _rate_tolerance(tpr, len(pos))
        assert abs(realised_tnr - tnr) <= max(0.2, _rate_tolerance(tnr, len(neg)))
        assert 0 < len(mine) - len(decided) <= 0.08 * len(mine)
        for v in mine:
            if v["result"] == "uncertain":
                assert v["blockedBy"]["text"] and v["confidence"] == 0.0


def test_labels_are_truthful_stratified_and_leave_the_rest_unlabelled(default_dir):
    traces = {t.id: t for t in _traces(default_dir)}
    labels = _records(default_dir, "human-labels.jsonl")
    truth = read_json_strict(default_dir / "ground-truth.json")
    assert [(r["criterionId"], r["traceId"]) for r in labels] == sorted((r["criterionId"], r["traceId"])
                                                                        for r in labels)
    for criterion, info in truth["criteria"].items():
        mine = [r for r in labels if r["criterionId"] == criterion]
        assert 140 <= len(mine) <= 160
        assert 1 <= sum(r["label"] == "defer" for r in mine) <= 10
        for r in mine:
            failed = info["failureMode"] in traces[r["traceId"]].metadata["injected_failures"]
            if r["label"] != "defer":
                assert r["label"] == ("fail" if failed else "pass"), r
        for value in ("pass", "fail"):
            stratum = [r for r in mine if r["label"] == value]
            share = {s: sum(r["split"] == s for r in stratum) / len(stratum) for s in ("train", "dev", "test")}
            assert abs(share["train"] - 0.15) < 0.1 and abs(share["dev"] - 0.40) < 0.12, (criterion, value, share)
        labelled = {r["traceId"] for r in mine}
        unlabelled = [t for tid, t in traces.items() if tid not in labelled]
        passing = sum(info["failureMode"] not in t.metadata["injected_failures"] for t in unlabelled)
        assert info["truePassRate"]["unlabelledTraces"] == round(passing / len(unlabelled), 4)


def test_dropped_tool_results_are_missing_from_the_answer_and_clean_ones_thread(default_dir):
    dropped_seen = threaded_seen = 0
    for t in _traces(default_dir):
        respond = _by_name(t, "respond")[0]
        respond_input = _compact(respond.input)
        for tool in ("order_lookup", "kb_search"):
            for obs in _by_name(t, tool):
                slots = _slot_values(obs.output)
                key = "items" if tool == "order_lookup" else "articles"
                if obs.level == "ERROR":
                    continue
                assert key in slots
                if t.metadata["dropped_tool"] == tool:
                    dropped_seen += 1
                    assert "dropped_tool_result" in t.metadata["injected_failures"]
                    assert slots[key] not in _later_inputs(t, obs), t.id
                else:
                    threaded_seen += 1
                    assert slots[key] in respond_input, (t.id, tool)
        if "dropped_tool_result" in t.metadata["injected_failures"]:
            assert t.metadata["dropped_tool"] in ("order_lookup", "kb_search")
        else:
            assert t.metadata["dropped_tool"] is None
    assert dropped_seen >= 20 and threaded_seen >= 300


def test_expected_flow_edges_hold_in_clean_traces(default_dir):
    flow = read_json_strict(default_dir / "expected-flow.json")
    checked = 0
    for t in _traces(default_dir):
        if t.metadata["injected_failures"]:
            continue
        for edge in flow["edges"]:
            producers = [o for o in _by_name(t, edge["fromTool"]) if o.has_output and o.level != "ERROR"]
            consumers = _by_name(t, edge["toTool"])
            if not producers or not consumers:
                continue
            value = _slot_values(producers[0].output)[edge["slot"]]
            assert value in _compact(consumers[0].input), (t.id, edge)
            checked += 1
    assert checked >= 500


def test_other_failure_modes_are_visible_exactly_where_injected(default_dir):
    claims = {p.claim.lower() for p in POLICIES}
    false_claims = {p.false_claim.lower() for p in POLICIES}
    for t in _traces(default_dir):
        injected = set(t.metadata["injected_failures"])
        lookups = _by_name(t, "order_lookup")
        if lookups:
            asked = ORDER_ID.search(t.input).group(0)
            assert (lookups[0].input["order_id"] != asked) == ("wrong_tool_args" in injected), t.id
        answer = t.output.lower()
        snippets = " ".join(a["snippet"].lower() for o in _by_name(t, "kb_search") if o.has_output
                            for a in o.output["articles"])
        stated = [c for c in claims | false_claims if c in answer]
        assert len(stated) <= 1
        hallucinated = bool(stated) and stated[0] not in snippets
        assert hallucinated == ("hallucinated_policy" in injected), t.id
        escalated = bool(_by_name(t, "escalate_to_human"))
        needs = t.metadata["needs_escalation"]
        assert (needs and not escalated) == ("missed_escalation" in injected), t.id
        assert not (escalated and not needs), t.id


def test_verdict_refs_cite_real_observation_values(default_dir):
    traces = {t.id: t for t in _traces(default_dir)}
    for v in _records(default_dir, "criterion-verdicts.jsonl"):
        assert v["refs"], v
        observations = {o.id: o for o in traces[v["traceId"]].observations}
        for ref in v["refs"]:
            cited = _resolve(observations[ref["obs"]].to_json_obj(), ref["path"])
            assert ref["value"] in (cited if isinstance(cited, str) else _compact(cited)), ref


def test_dataset_case_ids_follow_the_fnv_rule(default_dir):
    dataset = read_json_strict(default_dir / "dataset.json")
    assert {d["name"] for d in dataset["dimensions"]} == {"intent", "customer_tier", "channel"}
    assert len(dataset["cases"]) == 20
    assert len({tuple(sorted(c["tuple"].items())) for c in dataset["cases"]}) == 20
    for case in dataset["cases"]:
        assert case["id"] == case_id(case["tuple"], case["query"])
    # the rule reproduces the contract example's id
    example = {"intent": "refund-request", "mood": "calm", "order_state": "delivered"}
    query = "Hi, order ORD-2025-118734 arrived with a cracked screen protector. Can I get my money back?"
    assert case_id(example, query) == "case-9216fdb7"


def test_readme_tables_show_the_ground_truth_numbers(default_dir):
    readme = (default_dir / "README.md").read_text(encoding="utf-8")
    truth = read_json_strict(default_dir / "ground-truth.json")
    for mode, row in truth["failureModes"].items():
        assert f"| `{mode}` | {row['targetRate']:.4f} | {row['applicableTraces']} | {row['injectedTraces']} | " \
               f"{row['realisedRate']:.4f} |" in readme
    for criterion, info in truth["criteria"].items():
        judge = info["judge"]
        assert f"| `{criterion}` | {judge['tprTarget']:.4f} | {judge['tprRealised']:.4f} | " \
               f"{judge['tnrTarget']:.4f} | {judge['tnrRealised']:.4f} |" in readme


@pytest.mark.slow
def test_the_committed_sample_matches_a_fresh_generation():
    fresh = {f.name: f.text.encode("utf-8") for f in build_sample(7, 300)}
    committed = {p.name: p.read_bytes() for p in COMMITTED.iterdir() if p.is_file()}
    assert sorted(committed) == sorted(fresh), "data/sample/ has missing or extra files"
    for name, data in fresh.items():
        assert committed[name] == data, f"data/sample/{name} differs: run `python -m evalkit.sample_subject`"
    assert sum(len(d) for d in committed.values()) < 2_600_000  # the judge cassette and runs: 0.55 MB


def test_annotations_review_a_seeded_random_sample_truthfully(default_dir):
    traces = {t.id: t for t in _traces(default_dir)}
    records = [Annotation.model_validate(r) for r in _records(default_dir, "annotations.jsonl")]
    ana = [a for a in records if a.annotator == "ana"]
    ben = [a for a in records if a.annotator == "ben"]
    assert records == ana + ben  # the store's order is the order the reviews happened
    drawn = sample_traces(list(traces.values()), REVIEWED_TRACES, "random", 7)
    assert [a.trace_id for a in ana] == [t.id for t in drawn]
    assert len(ben) == SECOND_REVIEWER_TRACES and {a.trace_id for a in ben} < {a.trace_id for a in ana}
    for reviewer in (ana, ben):
        assert [a.at for a in reviewer] == sorted(a.at for a in reviewer)
    missed = injected_total = 0
    for a in records:
        trace = traces[a.trace_id]
        injected = [m.replace("_", "-") for m in FAILURE_MODES if m in trace.metadata["injected_failures"]]
        assert set(a.modes) <= set(injected), a
        assert a.label == ("fail" if a.modes else "pass"), a
        missed += len(injected) - len(a.modes)
        injected_total += len(injected)
        if a.label == "fail":
            first = next(o for o in trace.observations if o.id == a.first_failing_obs)
            assert first.name in ("plan", "respond")
    assert injected_total >= 30
    assert missed <= max(3, 3 * REVIEW_MISS_RATE * injected_total)


def test_taxonomy_rules_map_every_review_note_back_to_its_modes(default_dir):
    taxonomy = Taxonomy.model_validate(read_document(default_dir / "failure-modes.yaml"))
    assert taxonomy.mode_ids() == [m.replace("_", "-") for m in FAILURE_MODES]
    for r in _records(default_dir, "annotations.jsonl"):
        annotation = Annotation.model_validate(r)
        assert modes_for_note(annotation.note, taxonomy) == annotation.modes, annotation


def test_ground_truth_counts_the_annotations(default_dir):
    traces = {t.id: t for t in _traces(default_dir)}
    truth = read_json_strict(default_dir / "ground-truth.json")["annotations"]
    records = _records(default_dir, "annotations.jsonl")
    readme = (default_dir / "README.md").read_text(encoding="utf-8")
    assert truth["missRate"] == REVIEW_MISS_RATE
    for reviewer, info in truth["reviewers"].items():
        mine = [r for r in records if r["annotator"] == reviewer]
        assert info["reviewedTraces"] == len(mine)
        assert info["fail"] == sum(r["label"] == "fail" for r in mine)
        for mode, row in info["failureModes"].items():
            injected = sum(mode.replace("-", "_") in traces[r["traceId"]].metadata["injected_failures"] for r in mine)
            annotated = sum(mode in r["modes"] for r in mine)
            assert (row["injectedInReviewed"], row["annotated"]) == (injected, annotated)
            assert row["annotatedRate"] == round(annotated / len(mine), 4)
            if reviewer == "ana":
                assert f"| `{mode}` | {injected} | {annotated} | {injected - annotated} | " \
                       f"{row['injectedRate']:.4f} | {row['annotatedRate']:.4f} |" in readme
