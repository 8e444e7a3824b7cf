"""Error analysis: sample traces, label them (pass/fail/defer, notes, failure modes), rank the modes.

Read traces, write what went wrong (open coding), group the notes into failure modes (axial coding),
label every trace for each mode, rank the modes by rate, and stop once new traces stop revealing new
modes (saturation). Labels live in an append-only store; the review page makes labelling fast.

Every name loads on first use (:func:`evalkit.facade.load_on_first_use`): the command line reads
:mod:`evalkit.analysis.defaults` for its options, and must not pay for polars and pydantic to do so.
``from evalkit.analysis import sample_traces`` works as for any facade.
"""

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.analysis.agreement import AgreementOn, AnnotatorAgreement, agreement_on, annotator_agreement
    from evalkit.analysis.breakdown import breakdown_gap, mode_cooccurrence, modes_by
    from evalkit.analysis.coding import (
        KAPPA_FLOOR,
        MIN_HUMAN_POSITIVES,
        CoderAgreement,
        LlmCodedRate,
        ModeAgreement,
        SecondCoding,
        code_with_llm,
        coder_agreement,
        llm_coded_rates,
        mode_specs,
        split_reviewed,
    )
    from evalkit.analysis.defaults import SATURATION_WINDOW, STRATEGIES
    from evalkit.analysis.drafting import (
        DRAFT_SCHEMA,
        OpenNote,
        assemble_draft,
        draft_digest,
        draft_modes,
        draft_prompt,
        draft_yaml,
        notes_digest,
        open_notes,
        read_draft,
    )
    from evalkit.analysis.exports import (
        ImportResult,
        import_review_export,
        notes_from_table,
        read_review_export,
    )
    from evalkit.analysis.features import group_of, trace_features
    from evalkit.analysis.modes_story import ModesStory, modes_story
    from evalkit.analysis.outcomes import Outcome, detect_outcome, parse_outcome
    from evalkit.analysis.rates import FailureRates, ModeRate, failure_mode_rates
    from evalkit.analysis.ratifying import ratify, read_ratification, taxonomy_yaml
    from evalkit.analysis.review import render_review, review_key, trace_payload, trace_script, write_review
    from evalkit.analysis.reviewers import (
        Agreement,
        Disagreement,
        GoldLabels,
        ReviewerLabels,
        ReviewersReport,
        adjudicate,
        compare_reviewers,
        read_reviewer_file,
        reviewers_in_store,
    )
    from evalkit.analysis.sampling import sample_traces
    from evalkit.analysis.saturation import (
        SATURATION_BATCH,
        Batch,
        BatchSaturation,
        Saturation,
        SaturationPoint,
        saturation_by_batch,
        saturation_curve,
    )
    from evalkit.analysis.store import (
        StoreContents,
        annotators,
        append_annotations,
        labels_of,
        latest,
        read_store,
    )
    from evalkit.analysis.taxonomy import (
        axial_code,
        check_modes,
        modes_for_note,
        read_taxonomy,
        uncoded_fails,
        unknown_modes,
    )
    from evalkit.analysis.transcript import transcript
    from evalkit.contracts.annotation import Annotation, FailureMode, ReviewExport, Taxonomy

__all__ = [
    "assemble_draft",
    "notes_digest",
    "reviewers_in_store",
    "ModesStory",
    "modes_story",
    "SATURATION_BATCH",
    "Batch",
    "BatchSaturation",
    "saturation_by_batch",
    "notes_from_table",
    "Agreement",
    "Disagreement",
    "GoldLabels",
    "ReviewerLabels",
    "ReviewersReport",
    "adjudicate",
    "compare_reviewers",
    "read_reviewer_file",
    "ratify",
    "read_ratification",
    "taxonomy_yaml",
    "KAPPA_FLOOR",
    "MIN_HUMAN_POSITIVES",
    "CoderAgreement",
    "LlmCodedRate",
    "ModeAgreement",
    "SecondCoding",
    "code_with_llm",
    "coder_agreement",
    "llm_coded_rates",
    "mode_specs",
    "split_reviewed",
    "DRAFT_SCHEMA",
    "OpenNote",
    "draft_digest",
    "draft_modes",
    "draft_prompt",
    "draft_yaml",
    "open_notes",
    "read_draft",
    "SATURATION_WINDOW",
    "STRATEGIES",
    "Annotation",
    "AnnotatorAgreement",
    "FailureMode",
    "FailureRates",
    "ImportResult",
    "AgreementOn",
    "ModeRate",
    "ReviewExport",
    "Saturation",
    "SaturationPoint",
    "StoreContents",
    "Taxonomy",
    "annotator_agreement",
    "annotators",
    "append_annotations",
    "axial_code",
    "breakdown_gap",
    "check_modes",
    "agreement_on",
    "failure_mode_rates",
    "group_of",
    "import_review_export",
    "labels_of",
    "latest",
    "mode_cooccurrence",
    "modes_by",
    "modes_for_note",
    "read_review_export",
    "read_store",
    "read_taxonomy",
    "render_review",
    "review_key",
    "sample_traces",
    "saturation_curve",
    "trace_features",
    "trace_payload",
    "trace_script",
    "transcript",
    "uncoded_fails",
    "unknown_modes",
    "write_review",
    "Outcome",
    "detect_outcome",
    "parse_outcome",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
