"""edit-F1 in training loops: a ``transformers`` callback that scores drafts the model
generates at every evaluation, and a ``compute_metrics`` for ``Seq2SeqTrainer``; both
score with :class:`~editf1.scorer.EditF1Scorer` and log :func:`edit_f1_logs`.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import torch
from transformers import GenerationConfig, TrainerCallback

from editf1.drafting.prompts import SYSTEM_PROMPT, user_text
from editf1.inputs import InputError, check_id, check_option, check_pairs, check_reference
from editf1.integrations.distributed import process_state, renumbered, several_processes, share_of
from editf1.io import JsonlWriter
from editf1.results import CorpusResult
from editf1.scorer import EditF1Scorer

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "EditF1Callback",
    "build_prompt",
    "edit_f1_logs",
    "make_compute_metrics",
    "read_drafts",
    "uses_chat_template",
]

#: The instruction the default prompt gives the model (the drafting prompts' own).
DEFAULT_SYSTEM_PROMPT = SYSTEM_PROMPT


def uses_chat_template(tokenizer) -> bool:
    """True if ``tokenizer`` has a chat template (prompts then carry their special tokens)."""
    return bool(getattr(tokenizer, "chat_template", None))


def build_prompt(
    example: dict,
    tokenizer,
    *,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    message_field: str = "message",
    ehr_field: str = "ehr_summary",
) -> str:
    """The prompt for one example (the reply follows it): the tokenizer's chat template
    if it has one, else plain text ending in ``"Reply:\\n"``. Build training texts with it
    too, so the callback asks the question the model is trained on.

    Raises:
        KeyError: if the example has no ``message_field``.
    """
    user = user_text(example[message_field], example.get(ehr_field))
    if uses_chat_template(tokenizer):
        messages = [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": user},
        ]
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return f"{system_prompt}\n\n{user}\n\nReply:\n"


def edit_f1_logs(result: CorpusResult, prefix: str) -> dict[str, float]:
    """The logged figures of one scored set of drafts, keyed ``<prefix>edit_f1_<name>``
    (``prefix`` e.g. ``"eval_"``): ``content_`` and (with a theme judge) ``theme_``
    ``precision``, ``recall``, ``f1`` (micro, in [0, 1]), ``pairs``, ``empty_drafts`` (scored
    precision 0) and ``unusable_judgements``."""
    logs = {
        f"{level}_{measure}": getattr(prf, measure)
        for level, prf in (("content", result), ("theme", result.theme))
        if prf is not None
        for measure in ("precision", "recall", "f1")
    }
    logs |= {
        "pairs": result.n_pairs,
        "empty_drafts": result.empty_predictions,
        "unusable_judgements": result.unusable_judgements + result.unusable_theme_judgements,
    }
    return {f"{prefix}edit_f1_{k}": float(v) for k, v in logs.items()}


def _seed(device: torch.device, seed: int) -> None:
    """Seed the CPU generator and the model's own accelerator only (not every GPU)."""
    torch.random.default_generator.manual_seed(seed)
    if device.type != "cpu":
        module = getattr(torch, device.type)
        scope = module.device(device) if hasattr(module, "device") else contextlib.nullcontext()
        with scope:
            module.manual_seed(seed)


def _default_scorer() -> EditF1Scorer:
    # empty drafts, common early in training, score 0 and are counted, not warned about
    return EditF1Scorer(zero_division=0.0)


class EditF1Callback(TrainerCallback):
    """Log edit-F1 of drafts the model generates, once per global step at evaluation,
    through ``trainer.log`` and into the metrics ``Trainer.evaluate`` returns
    (``metric_for_best_model="edit_f1_content_f1"`` works). The model's mode, the tokenizer
    and every RNG are left as they were. Under several processes each generates and
    scores its share and every one logs the figures of all (``docs/serving.md``)::

        trainer.add_callback(EditF1Callback(trainer, held_out, num_examples=32))

    Args:
        trainer: ``None`` outside a Trainer (call :meth:`evaluate` yourself).
        examples: dicts or a ``datasets.Dataset``: patient message, optional EHR summary,
            clinician reply (keys ``message_field``, ``ehr_field``, ``reference_field``).
        num_examples: score the first ``num_examples`` (default: all).
        scorer: default: the embedded judges, ``zero_division=0.0``.
        tokenizer: default: the Trainer's ``processing_class``.
        generation_config: default: greedy, ``max_new_tokens=256``; copied, never modified.
        prompt_builder: ``(example, tokenizer) -> prompt`` (default: :func:`build_prompt`).
        add_special_tokens: default: False if the tokenizer has a chat template.
        seed: of the forked torch RNG sampling draws from (process k: ``seed + k``).
        metric_key_prefix: logged keys start with ``"<prefix>_edit_f1_"``.
        drafts_dir: if set (off by default: patient texts), each evaluation writes
            ``step-<global step>.jsonl`` there: ``step``, ``example`` (as given),
            ``prediction`` and :meth:`editf1.results.PairResult.to_dict` per example
            (``last_result.pairs`` under several processes needs it too).

    Raises:
        InputError: naming each example and field that is missing or not usable, and
            each repeated ``id``.
        ValueError: for ``num_examples`` or ``batch_size`` below 1 (TypeError: not an int).
    """

    def __init__(
        self,
        trainer,
        examples: Iterable[dict],
        *,
        num_examples: int | None = None,
        scorer: EditF1Scorer | None = None,
        tokenizer=None,
        generation_config: GenerationConfig | dict | None = None,
        batch_size: int = 8,
        prompt_builder: Callable[[dict, object], str] | None = None,
        add_special_tokens: bool | None = None,
        message_field: str = "message",
        ehr_field: str = "ehr_summary",
        reference_field: str = "reference",
        seed: int = 0,
        metric_key_prefix: str = "eval",
        drafts_dir: str | Path | None = None,
    ) -> None:
        check_option("num_examples", num_examples, int, minimum=1, optional=True)
        check_option("batch_size", batch_size, int, minimum=1)
        rows = list(examples)[:num_examples]
        errors, seen_ids = [], {}
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or message_field not in row or reference_field not in row:
                errors.append(
                    f"examples[{i}] needs the keys {message_field!r} and {reference_field!r}"
                )
                continue
            errors += check_id(i, str(row.get("id", i)), seen_ids)
            errors += check_reference(i, row[reference_field], reference_field)
            if not isinstance(row[message_field], str):
                errors.append(f"{message_field}[{i}] must be a string")
        if not rows:
            errors.append("examples is empty: give at least one held-out example")
        if errors:
            raise InputError(errors)
        self.trainer = trainer
        self.examples = rows
        self.scorer = scorer or _default_scorer()
        self.tokenizer = tokenizer
        if isinstance(generation_config, dict):
            generation_config = GenerationConfig(**generation_config)
        self.generation_config = copy.deepcopy(
            generation_config or GenerationConfig(max_new_tokens=256, do_sample=False)
        )
        self.batch_size = batch_size
        self.prompt_builder = prompt_builder or functools.partial(
            build_prompt, message_field=message_field, ehr_field=ehr_field
        )
        self.add_special_tokens = add_special_tokens
        self.reference_field = reference_field
        self.seed = seed
        self.prefix = f"{metric_key_prefix}_" if metric_key_prefix else ""
        self.drafts_dir = None if drafts_dir is None else Path(drafts_dir)
        self.last_drafts: list[str] | None = None
        self.last_result: CorpusResult | None = None
        self._cached: tuple[int, dict] | None = None

    @property
    def references(self) -> list[str]:
        return [row[self.reference_field] for row in self.examples]

    @property
    def ids(self) -> list[str]:
        """Each example's ``id`` as a string, else its index."""
        return [str(row.get("id", i)) for i, row in enumerate(self.examples)]

    def _batches(self) -> list[range]:
        n = len(self.examples)
        return [range(s, min(s + self.batch_size, n)) for s in range(0, n, self.batch_size)]

    def generate(self, model, tokenizer) -> list[str]:
        """Drafts for the held-out examples, in order; the model's mode, the tokenizer's
        padding side and pad token, and the torch, NumPy and Python RNGs are restored."""
        return [d for batch in self._generate(model, tokenizer, self._batches()) for d in batch]

    def _generate(self, model, tokenizer, batches: list[range], seed_offset: int = 0):
        generation_config = copy.deepcopy(self.generation_config)
        was_training = model.training
        padding_side, pad_token = tokenizer.padding_side, tokenizer.pad_token
        encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
        special = self.add_special_tokens
        if special is None:
            special = not uses_chat_template(tokenizer)
        device = model.device
        cpu = device.type == "cpu"
        fork = {"devices": []} if cpu else {"devices": [device], "device_type": device.type}
        python_state, numpy_state = random.getstate(), np.random.get_state()
        drafts: list[list[str]] = []
        try:
            model.eval()
            if not encoder_decoder:
                tokenizer.padding_side = "left"  # generated tokens follow the prompt
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
            if generation_config.pad_token_id is None:
                generation_config.pad_token_id = tokenizer.pad_token_id
            with torch.no_grad(), torch.random.fork_rng(**fork):
                _seed(device, self.seed + seed_offset)
                for indices in batches:
                    prompts = [self.prompt_builder(self.examples[i], tokenizer) for i in indices]
                    batch = tokenizer(
                        prompts, return_tensors="pt", padding=True, add_special_tokens=special
                    ).to(device)
                    output = model.generate(**batch, generation_config=generation_config)
                    if not encoder_decoder:
                        output = output[:, batch["input_ids"].shape[1] :]
                    decoded = tokenizer.batch_decode(output, skip_special_tokens=True)
                    drafts.append([d.strip() for d in decoded])
        finally:
            model.train(was_training)
            tokenizer.padding_side, tokenizer.pad_token = padding_side, pad_token
            random.setstate(python_state)
            np.random.set_state(numpy_state)
        return drafts

    def evaluate(self, model, tokenizer=None, *, step: int | None = None) -> dict[str, float]:
        """Generate, score and return :func:`edit_f1_logs`; ``step`` names the
        ``drafts_dir`` file. ``tokenizer``: default the one given or the Trainer's.

        Raises:
            ValueError: without a tokenizer.
        """
        tokenizer = tokenizer or self.tokenizer or getattr(self.trainer, "processing_class", None)
        if tokenizer is None:
            raise ValueError("EditF1Callback needs a tokenizer (tokenizer= or the Trainer's)")
        ids = self.ids
        main_process = True
        if several_processes():
            state = process_state()
            main_process = state.is_main_process
            drafts, result = self._evaluate_shared(state, model, tokenizer, ids)
        else:
            drafts = self.generate(model, tokenizer)
            result = self.scorer.score(drafts, self.references, ids=ids)
        self.last_drafts, self.last_result = drafts, result
        if self.drafts_dir is not None and main_process:
            self._write_drafts(result, drafts, step)
        return edit_f1_logs(result, self.prefix)

    def _evaluate_shared(self, state, model, tokenizer, ids: list[str]):
        """(drafts, result) of every example, on every process. Every process calls
        ``generate`` equally often (sharded models need it): one with fewer batches
        repeats its last, output dropped."""
        from accelerate.utils import gather_object

        batches = self._batches()
        mine = share_of(state, len(batches))
        rounds = -(-len(batches) // state.num_processes)
        calls = [batches[b] for b in mine]
        calls += [calls[-1] if calls else batches[-1]] * (rounds - len(calls))
        generated = self._generate(model, tokenizer, calls, seed_offset=state.process_index)
        drafts = [d for batch in generated[: len(mine)] for d in batch]
        first = calls[0].start if mine else 0
        rows = slice(first, first + len(drafts))
        share = check_pairs(drafts, self.references[rows], ids[rows], first_row=first)
        keep_pairs = self.drafts_dir is not None
        mine = self.scorer.accumulator(keep_pairs=keep_pairs)
        for pair in self.scorer.iter_pairs(share):
            mine.add(renumbered(pair, first))
        shares = gather_object([(mine, drafts)])
        merged = self.scorer.accumulator(keep_pairs=keep_pairs)
        for accumulator, _ in shares:
            merged.merge(accumulator)
        result = merged.result(
            self.scorer.provenance, judges=self.scorer.judges, warn=state.is_main_process
        )
        return [d for _, share_drafts in shares for d in share_drafts], result

    def _write_drafts(self, result: CorpusResult, drafts: list[str], step: int | None) -> None:
        name = "final" if step is None else f"step-{step}"
        with JsonlWriter(self.drafts_dir / f"{name}.jsonl") as write:
            for example, draft, pair in zip(self.examples, drafts, result.pairs):
                # the example as given, whole (its own "prediction" or "step" kept there)
                write({"step": step, "example": example, "prediction": draft, **pair.to_dict()})

    def on_step_begin(self, args, state, control, **kwargs):
        self._cached = None

    on_train_end = on_step_begin

    def on_evaluate(self, args, state, control, model=None, metrics=None, **kwargs):
        if self._cached is not None and self._cached[0] == state.global_step:
            logs = self._cached[1]
        else:
            tokenizer = self.tokenizer or kwargs.get("processing_class")
            logs = self.evaluate(model, tokenizer, step=state.global_step)
            self._cached = (state.global_step, logs)
            if self.trainer is not None:
                self.trainer.log(dict(logs))
        if metrics is not None:
            metrics.update(logs)


def make_compute_metrics(
    tokenizer,
    *,
    scorer: EditF1Scorer | None = None,
    references: Sequence[str] | None = None,
) -> Callable:
    """A ``compute_metrics(eval_pred, compute_result=None)`` for
    ``Seq2SeqTrainer(predict_with_generate=True)``: generated ids (``-100`` read as
    padding) decoded into drafts, label ids into replies, :func:`edit_f1_logs` with no
    prefix returned; with ``batch_eval_metrics=True`` it scores once, at the end.
    Decoder-only models return prompt and reply together: strip the prompt first (or
    use :class:`EditF1Callback`).

    Args:
        scorer: default: embedded judges, ``zero_division=0.0``.
        references: the clinician replies in evaluation order, used instead of decoding
            the labels (truncated labels would cut replies short).

    Raises (when called):
        ValueError: if ``references`` does not have one reply per prediction.
    """
    scorer = scorer or _default_scorer()
    pending: dict[str, list[str]] = {"drafts": [], "references": []}

    def decode(ids) -> list[str]:
        ids = ids[0] if isinstance(ids, tuple) else ids
        ids = np.where(np.asarray(ids) == -100, tokenizer.pad_token_id, ids)
        return [t.strip() for t in tokenizer.batch_decode(ids, skip_special_tokens=True)]

    def compute_metrics(eval_pred, compute_result: bool | None = None) -> dict[str, float]:
        pending["drafts"] += decode(eval_pred.predictions)
        if references is None:
            pending["references"] += decode(eval_pred.label_ids)
        if compute_result is False:
            return {}
        drafts = pending["drafts"]
        replies = list(references) if references is not None else pending["references"]
        pending["drafts"], pending["references"] = [], []
        if len(replies) != len(drafts):
            raise ValueError(
                f"references has {len(replies)} replies for {len(drafts)} generated drafts"
            )
        return edit_f1_logs(scorer.score(drafts, replies), "")

    return compute_metrics


def read_drafts(path: str | Path) -> list[dict]:
    """Rows of a ``drafts_dir`` file written by :class:`EditF1Callback`."""
    return [json.loads(line) for line in Path(path).read_text("utf-8").splitlines() if line]
