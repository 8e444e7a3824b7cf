"""Command groups and the subject-run options are spelled once, so every command reads them the same way."""

from __future__ import annotations

import argparse

import pytest

from evalkit.cli.main import build_parser, main


def _groups() -> list[str]:
    """The ``evalkit`` commands that only hold subcommands."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return [name for name, parser in sub.choices.items()
            if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)]


@pytest.mark.parametrize("group", ["analysis", "dataset", "edd", "eval", "labels", "review", "skill-eval",
                                   "traces", "verdicts"])
def test_a_group_without_its_command_is_a_usage_error_that_names_the_missing_command(
        group: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert group in _groups()
    with pytest.raises(SystemExit) as stop:
        main([group])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"usage: evalkit {group} [-h] COMMAND" in err
    assert "the following arguments are required: COMMAND" in err


@pytest.mark.parametrize(("command", "concurrency"), [(["eval", "run"], 4), (["edd", "run"], 2)])
def test_eval_run_and_edd_run_read_the_subject_out_concurrency_and_cases_alike(command: list[str],
                                                                               concurrency: int) -> None:
    args = build_parser().parse_args([*command, "subject.yaml", "--out", "runs", "--case", "c-1", "c-2"])
    assert (args.subject, args.out, args.concurrency, args.case) == ("subject.yaml", "runs", concurrency,
                                                                     ["c-1", "c-2"])
    args = build_parser().parse_args([*command, "subject.yaml", "--out", "runs", "--concurrency", "7"])
    assert (args.concurrency, args.case) == (7, None)


@pytest.mark.parametrize("command", [["eval", "run"], ["edd", "run"]])
def test_a_subject_run_without_its_folder_is_refused(command: list[str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "subject.yaml"])
    assert "the following arguments are required: --out" in capsys.readouterr().err


def _subcommand(path: list[str]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


@pytest.mark.parametrize("command", [["traces", "import"], ["traces", "stats"], ["review", "build"],
                                     ["sample"], ["flow", "build"]])
def test_every_command_reading_traces_offers_every_importer_and_sniffs_by_default(command: list[str]) -> None:
    from evalkit.traces import FORMATS

    option = next(a for a in _subcommand(command)._actions if "--format" in a.option_strings)
    assert (list(option.choices), option.default) == (["auto", *FORMATS], "auto")
