"""Every shape evalkit reads or writes, as pydantic models: the public surface of ``evalkit.contracts``.

Agent-eval shapes are camelCase on disk, skill-eval shapes snake_case (see :mod:`evalkit.contracts.base`).
``CONTRACTS`` maps each kind name (as in ``evalkit schema`` and ``evalkit validate --kind``) to its model.
Field types several shapes share (``NonEmptyStr``, ``Slug``, ``LowerName``, ``Rate``, the one interval
type ``ConfidenceInterval`` with its rate refinement ``RateConfidenceInterval``) are defined once, in
:mod:`evalkit.contracts.types`.

Every name loads on first use (:func:`evalkit.facade.load_on_first_use`): the command line reads
:mod:`evalkit.contracts.kinds` and :mod:`evalkit.contracts.edd_defaults` for its options, and must not pay for
pydantic to do so. ``from evalkit.contracts import Trace`` works as for any facade.
"""

from typing import TYPE_CHECKING

from evalkit.facade import load_on_first_use

if TYPE_CHECKING:
    from evalkit.contracts.annotation import Annotation, FailureMode, NoteRule, ReviewExport, Taxonomy
    from evalkit.contracts.base import CamelContract, OpenCamelContract, SnakeContract
    from evalkit.contracts.batch import Batch, BatchEntry, BatchIndex, BatchRow
    from evalkit.contracts.behavior_tree import BehaviorEdge, BehaviorNode, BehaviorTree
    from evalkit.contracts.dataset import AgentRun, Case, CaseExpectation, CaseOrigin, Dataset, Dimension
    from evalkit.contracts.edd import ChangeRequestResponse, EddChangeRequest, FailingCaseRef, LoopBudget
    from evalkit.contracts.flow import (
        ExpectedEdge,
        ExpectedFlow,
        FlowEdge,
        FlowGraph,
        FlowNode,
        UnthreadedOutput,
    )
    from evalkit.contracts.history import HistoryRecord
    from evalkit.contracts.judge import (
        FewShotExample,
        InputSelection,
        JudgeOutput,
        JudgePin,
        JudgeSpec,
        ObservationSelection,
        Term,
    )
    from evalkit.contracts.judge_run import JudgeRunRecord
    from evalkit.contracts.labels import (
        Adjudication,
        CalibrationBinding,
        HumanLabel,
        LedgerEntry,
        OverriddenVerdict,
        ResolvedLabel,
        ValidationResult,
    )
    from evalkit.contracts.matrix import CheckConfig, EvalMatrix, MatrixComponent, MatrixCriterion
    from evalkit.contracts.methodology import MethodologyItem, MethodologyReview
    from evalkit.contracts.modes import (
        Decision,
        DraftedBy,
        DraftMode,
        DraftTaxonomy,
        Ratification,
        RatifiedPart,
        UnplacedNote,
    )
    from evalkit.contracts.registry import CONTRACTS, kind_from_filename, kinds_matching
    from evalkit.contracts.scorecard import (
        ComponentScore,
        CriterionScore,
        OutcomeCounts,
        RateInterval,
        RegressionCase,
        RegressionSet,
        Scorecard,
    )
    from evalkit.contracts.skilleval import (
        SkillEvalAnswers,
        SkillEvalCase,
        SkillEvalFacts,
        SkillEvalPolicy,
        SkillEvalReport,
        SkillEvalSeed,
        SkillEvalStage,
    )
    from evalkit.contracts.subject import JudgeSettings, Subject
    from evalkit.contracts.summary import (
        Chart,
        CriterionHeadline,
        Headline,
        InputDigest,
        Metric,
        ModeHeadline,
        NotebookRun,
        NotebookSummary,
        RunManifest,
        Table,
    )
    from evalkit.contracts.trace import Observation, Trace
    from evalkit.contracts.types import (
        LOWER_NAME_PATTERN,
        SLUG_PATTERN,
        ConfidenceInterval,
        LowerName,
        NonEmptyStr,
        Rate,
        RateConfidenceInterval,
        Slug,
    )
    from evalkit.contracts.verdict import Assumption, BlockedBy, CriterionVerdict, Ref

__all__ = [
    "CONTRACTS",
    "LOWER_NAME_PATTERN",
    "SLUG_PATTERN",
    "AgentRun",
    "Annotation",
    "Assumption",
    "Batch",
    "BatchEntry",
    "BatchIndex",
    "BatchRow",
    "BehaviorEdge",
    "BehaviorNode",
    "BehaviorTree",
    "BlockedBy",
    "CalibrationBinding",
    "CamelContract",
    "Case",
    "CaseExpectation",
    "CaseOrigin",
    "ChangeRequestResponse",
    "Chart",
    "ConfidenceInterval",
    "CriterionHeadline",
    "CriterionVerdict",
    "Dataset",
    "Dimension",
    "EddChangeRequest",
    "EvalMatrix",
    "ExpectedEdge",
    "ExpectedFlow",
    "FailingCaseRef",
    "FailureMode",
    "FewShotExample",
    "FlowEdge",
    "FlowGraph",
    "FlowNode",
    "Headline",
    "HistoryRecord",
    "HumanLabel",
    "Adjudication",
    "OverriddenVerdict",
    "ResolvedLabel",
    "Decision",
    "DraftedBy",
    "DraftMode",
    "DraftTaxonomy",
    "Ratification",
    "RatifiedPart",
    "UnplacedNote",
    "InputDigest",
    "InputSelection",
    "JudgeOutput",
    "JudgePin",
    "JudgeRunRecord",
    "JudgeSettings",
    "JudgeSpec",
    "LedgerEntry",
    "LoopBudget",
    "LowerName",
    "MatrixComponent",
    "MatrixCriterion",
    "MethodologyItem",
    "MethodologyReview",
    "ModeHeadline",
    "Metric",
    "NonEmptyStr",
    "NoteRule",
    "NotebookRun",
    "NotebookSummary",
    "Observation",
    "ObservationSelection",
    "OpenCamelContract",
    "Rate",
    "RateConfidenceInterval",
    "Ref",
    "ReviewExport",
    "RunManifest",
    "SkillEvalAnswers",
    "SkillEvalCase",
    "SkillEvalFacts",
    "SkillEvalPolicy",
    "SkillEvalReport",
    "SkillEvalSeed",
    "SkillEvalStage",
    "SnakeContract",
    "Slug",
    "Subject",
    "Table",
    "Taxonomy",
    "Term",
    "Trace",
    "UnthreadedOutput",
    "ValidationResult",
    "kind_from_filename",
    "kinds_matching",
    "CheckConfig",
    "ComponentScore",
    "CriterionScore",
    "OutcomeCounts",
    "RateInterval",
    "RegressionCase",
    "RegressionSet",
    "Scorecard",
]

__getattr__, __dir__ = load_on_first_use(__name__, __all__)
