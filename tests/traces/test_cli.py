import json
from pathlib import Path

from evalkit.cli import main
from evalkit.traces import load

FIXTURES = Path(__file__).parent / "fixtures"


def test_import_merges_sources_into_one_native_file(tmp_path, capsys):
    out = tmp_path / "all.jsonl"
    rc = main(["traces", "import", str(FIXTURES / "langfuse_api_trace.json"),
               str(FIXTURES / "chat_logs.jsonl"), "--out", str(out)])
    assert rc == 0
    assert "imported 3 traces" in capsys.readouterr().out
    assert [t.id for t in load(out)] == ["lf-trace-1", "chat-1", "chat-2"]


def test_import_to_parquet_then_stats(tmp_path, capsys):
    out = tmp_path / "all.parquet"
    assert main(["traces", "import", str(FIXTURES / "langfuse_api_trace.json"), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["traces", "stats", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["traces"] == 1 and stats["observations"] == 4
    # camelCase field names like every --json; keys that are data (types, tool names) as they are
    assert stats["byType"] == {"GENERATION": 2, "AGENT": 1, "TOOL": 1}
    assert stats["tools"] == {"get_weather": 1}
    assert stats["levels"] == {"DEFAULT": 1, "WARNING": 1}
    assert stats["latencyMsByType"]["TOOL"]["max"] == 500.0
    assert stats["tokens"]["totalSum"] == 262.0
    assert "by_type" not in stats and stats["coverage"]["tracesTimed"] == 1


def test_stats_prints_a_readable_summary(capsys):
    assert main(["traces", "stats", str(FIXTURES / "chat_logs.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "2 traces, 6 observations" in out and "lookup_order" in out


def _bad_file(tmp_path):
    path = tmp_path / "mixed.jsonl"
    good = '{"id": "a", "observations": [{"id": "x", "type": "SPAN"}]}'
    bad = '{"id": "b", "observations": [{"id": "y", "type": "NOPE"}]}'
    other = good.replace('"id": "a"', '"id": "c"')
    path.write_text(f"{good}\n{bad}\n{other}\n")
    return path


def test_a_malformed_record_stops_the_import_with_its_location(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(["traces", "import", str(_bad_file(tmp_path)), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "mixed.jsonl:2: observations[0].type:" in err
    assert not out.exists()  # nothing half-written


def test_skip_invalid_quarantines_and_counts(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(["traces", "import", str(_bad_file(tmp_path)), "--out", str(out), "--skip-invalid"]) == 0
    captured = capsys.readouterr()
    assert "skipped 1 invalid record" in captured.err
    assert [t.id for t in load(out)] == ["a", "c"]
    (line,) = (tmp_path / "out.jsonl.quarantine.jsonl").read_text().splitlines()
    entry = json.loads(line)
    assert entry["line"] == 2 and entry["record"]["id"] == "b" and "observations[0].type" in entry["error"]


def test_skip_invalid_leaves_out_a_file_no_format_fits_and_counts_it(tmp_path, capsys):
    unknown = tmp_path / "notes.json"
    unknown.write_text('{"hello": "world"}')
    out = tmp_path / "out.jsonl"
    args = ["traces", "import", str(FIXTURES / "langfuse_api_trace.json"), str(unknown), "--out", str(out)]
    assert main(args) == 1 and "cannot tell the trace format" in capsys.readouterr().err  # stops without the flag
    assert main([*args, "--skip-invalid"]) == 0
    printed = capsys.readouterr().out
    assert "skipped: files no trace format fits (--skip-invalid): 1" in printed
    assert f"warning: left out: {unknown}: cannot tell the trace format" in printed
    assert [t.id for t in load(out)] == ["lf-trace-1"]


def test_duplicate_trace_ids_across_sources_are_an_error(tmp_path, capsys):
    src = FIXTURES / "langfuse_api_trace.json"
    assert main(["traces", "import", str(src), str(src), "--out", str(tmp_path / "o.jsonl")]) == 1
    assert "duplicate trace id 'lf-trace-1'" in capsys.readouterr().err
