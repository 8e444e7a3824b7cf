"""A scripted engineer for the sample agent: answers an EDD change request by amending ``agent-spec.yaml``.

``python -m evalkit.sample_subject.remedy --spec agent-spec.yaml --matrix eval-matrix.yaml --request REQ
--response RESP [--factor F]``. For each criterion of the request's failing cases it reads the failure
mode the eval matrix names for it (``evidenceSource``: "Injected failure mode wrong_tool_args ...") and
multiplies that mode's rate in the agent spec by ``F`` (default 0: the mode is turned off). It replies
``amended`` with what it changed, or ``rejected`` when no failing criterion names a failure mode of the
spec. ``--factor 1`` is an engineer whose amendments do not help: the loop stops on its no-improvement
streak. It is the subject's ``edd.remedy_command`` in the EDD demo (:mod:`evalkit.sample_subject.edd_demo`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import yaml

from evalkit.contract_files import read_model
from evalkit.contracts.edd import ChangeRequestResponse, EddChangeRequest
from evalkit.contracts.matrix import EvalMatrix
from evalkit.io import InputError, atomic_write_text, canonical_dumps
from evalkit.sample_subject.agent_spec import AgentSpec
from evalkit.sample_subject.catalog import FAILURE_MODES


def modes_by_criterion(matrix: EvalMatrix) -> dict[str, list[str]]:
    """The failure modes each criterion's evidence source names, by criterion id."""
    from evalkit.checks import criterion_id_of

    out: dict[str, list[str]] = {}
    for component in matrix.components:
        for i, criterion in enumerate(component.criteria):
            text = criterion.evidence_source or ""
            out[criterion_id_of(component.component_id, i, criterion)] = [m for m in FAILURE_MODES if m in text]
    return out


def amend(spec: AgentSpec, request: EddChangeRequest, matrix: EvalMatrix,
          factor: float) -> tuple[AgentSpec, ChangeRequestResponse]:
    """The amended spec and the response to the request."""
    named = modes_by_criterion(matrix)
    criteria = sorted({c.criterion_id for c in request.failing_cases})
    modes = sorted({m for cid in criteria for m in named.get(cid, [])})
    if not modes:
        return spec, ChangeRequestResponse(
            request_id=request.request_id, status="rejected",
            note=f"no failure mode of the agent spec explains {', '.join(criteria)}; not reproducible by a spec change")
    rates = dict(spec.failure_rates)
    changes = []
    for mode in modes:
        new = round(rates[mode] * factor, 6)
        changes.append(f"{mode} {rates[mode]:g} -> {new:g}")
        rates[mode] = new
    amended = spec.model_copy(update={"failure_rates": rates})
    return amended, ChangeRequestResponse(request_id=request.request_id, status="amended", amended_target="agentspec",
                                          note=f"agent-spec failure_rates for {', '.join(criteria)}: "
                                               + "; ".join(changes))


def main(argv: Sequence[str] | None = None) -> int:
    """Read the request, amend the spec in place, write the response."""
    parser = argparse.ArgumentParser(prog="python -m evalkit.sample_subject.remedy", description=__doc__.split("\n")[0])
    parser.add_argument("--spec", required=True)
    parser.add_argument("--matrix", required=True)
    parser.add_argument("--request", required=True)
    parser.add_argument("--response", required=True)
    parser.add_argument("--factor", type=float, default=0.0, help="what an amendment leaves of a rate (default 0)")
    args = parser.parse_args(argv)
    if not 0 <= args.factor <= 1:
        parser.error("--factor must be between 0 and 1")
    try:
        spec = read_model(args.spec, AgentSpec)
        request = read_model(args.request, EddChangeRequest)
        matrix = read_model(args.matrix, EvalMatrix)
    except InputError as exc:
        print(f"remedy: {exc.render()}", file=sys.stderr)
        return 2
    amended, response = amend(spec, request, matrix, args.factor)
    if response.status == "amended":
        atomic_write_text(args.spec, yaml.safe_dump(amended.to_json_obj(), sort_keys=True, default_flow_style=False))
    atomic_write_text(args.response, canonical_dumps(response.to_json_obj()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
