"""The judge interface: step 2 of the pipeline (segment → judge → count → aggregate).

A *content judge* answers, for each sentence of the reference (the clinician's reply),
which span of the prediction (the LLM draft) says the same thing, or NO MATCH
(Seegmiller et al., arXiv 2601.11344, Algorithm 1 and Appendix C). A *theme judge*
labels sentences with one of :data:`editf1.themes.THEMES` (§3.2).

Both are batch-first: the scorer hands a judge every pair (or sentence) of a batch at
once, so encoders and generative models run in large batches. The counting code never
knows which judge answered; it only reads :class:`ContentJudgement` and
:class:`ThemeJudgement`.

A judgement whose model output could not be used (text that is not in the draft, a
label that is not a theme) has status ``"unusable"``: the scorer counts it, reports it
beside the scores and treats it as unmatched (content) or unlabelled (theme). It is
never turned silently into a score.
"""

from __future__ import annotations

import abc
import dataclasses
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

if TYPE_CHECKING:
    from editf1.segment import Sentence

__all__ = [
    "ContentJudge",
    "ContentJudgement",
    "JudgeConfig",
    "JudgeRequest",
    "ThemeJudge",
    "ThemeJudgement",
    "VetoedSpan",
]

Status = Literal["match", "no_match", "unusable"]
STATUSES: tuple[str, ...] = ("match", "no_match", "unusable")


@dataclass(frozen=True)
class JudgeRequest:
    """One (reference, prediction) pair, already segmented.

    Attributes:
        reference_sentences: the clinician reply's sentences; the judge answers each.
        prediction: the full draft text; returned spans index into it.
        prediction_sentences: the draft's sentences (offsets into ``prediction``).
    """

    reference_sentences: tuple[Sentence, ...]
    prediction: str
    prediction_sentences: tuple[Sentence, ...]


@dataclass(frozen=True)
class VetoedSpan:
    """The draft span a judge's veto ruled out, where without the veto it would have
    been the match (see :class:`~editf1.judges.embedding.EmbeddingContentJudge`).

    Attributes:
        span: the draft span, offsets into the draft.
        kinds: the conflict kinds that ruled it out, in
            :data:`editf1.judges.key_terms.CONFLICT_KINDS` order (e.g. ``("direction",)``).
        probability: the span's probability without the veto, in [threshold, 1].
    """

    span: Sentence
    kinds: tuple[str, ...]
    probability: float

    def to_dict(self) -> dict:
        return {
            "span": self.span.to_dict(),
            "kinds": list(self.kinds),
            "probability": self.probability,
        }


@dataclass(frozen=True)
class ContentJudgement:
    """A content judge's answer for one reference sentence.

    Attributes:
        status: ``"match"`` (``span`` is set), ``"no_match"`` or ``"unusable"``.
        span: the verbatim draft span judged to say the same thing, with offsets into
            the draft; ``None`` unless ``status == "match"``.
        score: the judge's confidence or similarity in [0, 1] where it has one.
        raw: the model's raw output, for generative judges.
        vetoed: for a ``"no_match"``, the span a veto ruled out that would otherwise
            have been the match, and why; ``None`` otherwise.
    """

    status: Status
    span: Sentence | None = None
    score: float | None = None
    raw: str | None = None
    vetoed: VetoedSpan | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"a ContentJudgement's status is one of {list(STATUSES)}")
        if self.score is not None and not (
            isinstance(self.score, numbers.Real) and 0.0 <= self.score <= 1.0
        ):  # NaN fails too: it would reach the output as invalid JSON
            raise ValueError("a ContentJudgement's score is None or a number in [0, 1]")
        if (self.status == "match") != (self.span is not None):
            raise ValueError("a ContentJudgement has a span if and only if status is 'match'")
        if self.vetoed is not None and self.status != "no_match":
            raise ValueError("only a NO MATCH ContentJudgement has a vetoed span")


@dataclass(frozen=True)
class ThemeJudgement:
    """A theme judge's answer for one sentence.

    Attributes:
        theme: one of :data:`editf1.themes.THEMES`, or ``None`` when unusable.
        score: the judge's probability for ``theme`` in [0, 1] where it has one.
        raw: the model's raw output, for generative judges.
    """

    theme: str | None
    score: float | None = None
    raw: str | None = None

    @property
    def usable(self) -> bool:
        return self.theme is not None


class JudgeConfig:
    """What the judges' settings dataclasses share (peft's ``LoraConfig`` shape): each
    field has a default (or none, where the judge needs it given) and a help text
    (``field(metadata={"help": ...})``, which ``edit-f1``'s help shows), its checks run
    in ``__post_init__``, and :meth:`to_json` / :meth:`from_json` are the judge's
    parameter file where it has one.

    A judge the registry loads by name (:data:`editf1.judges.CONTENT_JUDGES`) takes its
    config's fields as keyword options, and the options :attr:`OPTIONS` names besides.
    """

    #: Keyword options of the judge besides the fields (where to read the settings from,
    #: a device), each with its help text, for the registry and ``edit-f1``'s help.
    OPTIONS: ClassVar[dict[str, str]] = {}
    #: The option of :attr:`OPTIONS` naming the file the settings are read from, if any:
    #: their defaults are then that file's, not the fields'.
    SETTINGS_FROM: ClassVar[str | None] = None

    def to_json(self) -> dict:
        """The settings as a JSON object (lists for tuples)."""
        return {
            f.name: _jsonable(getattr(self, f.name))
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
        }

    @classmethod
    def from_json(cls, data: dict):
        """Settings from a JSON object (a parameter file); keys that are not fields (a
        training record) are ignored.

        Raises:
            TypeError: for a field the settings need that ``data`` lacks.
            ValueError: from ``__post_init__``, naming the field.
        """
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})

    def replace(self, **changes):
        """These settings with some fields changed (a judge's options by name).

        Raises:
            ValueError: naming the changes that are not fields, and the fields; or from
                ``__post_init__``.
        """
        names = sorted(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise ValueError(
                f"unknown option(s) {unknown} of {type(self).__name__}; known: {names}"
            )
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


def _jsonable(value):
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


class ContentJudge(abc.ABC):
    """Decides, per reference sentence, which verbatim draft span says the same thing."""

    @property
    @abc.abstractmethod
    def fingerprint(self) -> str:
        """A string naming the judge, its model and revision and its settings."""

    @abc.abstractmethod
    def match(self, requests: Sequence[JudgeRequest]) -> list[list[ContentJudgement]]:
        """Judge every reference sentence of every request.

        Args:
            requests: N pairs.

        Returns:
            N lists; list ``i`` holds one judgement per sentence of
            ``requests[i].reference_sentences``, in order. Every ``span`` satisfies
            ``span.text`` equal to ``requests[i].prediction[span.start:span.end]`` or to
            its :func:`~editf1.segment.plain_text` (the draft without HTML markup).
        """


class ThemeJudge(abc.ABC):
    """Labels sentences with one of the nine themes."""

    @property
    @abc.abstractmethod
    def fingerprint(self) -> str:
        """A string naming the judge, its model and revision and its settings."""

    @abc.abstractmethod
    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        """Label each sentence.

        Args:
            sentences: M sentence texts (any mix of reference and draft sentences).

        Returns:
            M judgements, in order.
        """
