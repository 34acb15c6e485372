"""editf1.training.rewards: edit-F1 as a trl reward, its gaming guards by hand, GRPOTrainer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from editf1.inputs import InputError
from editf1.judges.base import ContentJudge, ContentJudgement, ThemeJudge, ThemeJudgement
from editf1.scorer import EditF1Scorer
from editf1.training.rewards import EditF1Reward, completion_text, copied_fraction

REPLY = "Rest today. Drink water."


def exact_reward(**options) -> EditF1Reward:
    return EditF1Reward(EditF1Scorer("exact", None), **options)


def rewards(reward, drafts, reference=REPLY, message="My knee hurts."):
    n = len(drafts)
    return reward(
        prompts=["p"] * n, completions=drafts, reference=[reference] * n, message=[message] * n
    )


class PositionalJudge(ContentJudge):
    """Matches reference sentence k to draft sentence k: a judge that repeats can game."""

    fingerprint = "positional"

    def match(self, requests):
        return [
            [
                ContentJudgement("match", r.prediction_sentences[k], 1.0)
                if k < len(r.prediction_sentences)
                else ContentJudgement("no_match")
                for k in range(len(r.reference_sentences))
            ]
            for r in requests
        ]


class KeywordThemeJudge(ThemeJudge):
    """rest -> Medical planning instruction, call -> Contingency planning, else Other."""

    fingerprint = "keywords"

    def classify(self, sentences: Sequence[str]) -> list[ThemeJudgement]:
        def theme(text):
            text = text.lower()
            if "rest" in text:
                return "Medical planning instruction"
            return "Contingency planning" if "call" in text else "Other"

        return [ThemeJudgement(theme(s)) for s in sentences]


def test_content_reward_is_the_pairs_content_f1():
    # EM 1 (Rest today.), EA 1 (Drink water.), ED 1 (Call us.): 2/(2+1+1)
    assert rewards(exact_reward(), ["Rest today. Call us.", "Rest today. Drink water."]) == [
        0.5,
        1.0,
    ]


def test_conversational_completions_are_read_from_the_assistant_messages():
    draft = [{"role": "assistant", "content": "Rest today. Call us."}]
    assert rewards(exact_reward(), [draft]) == [0.5]
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "Drink water."}]}]
    assert completion_text(parts) == "Drink water."
    with pytest.raises(TypeError, match="string or a list of message dicts"):
        completion_text(3)


def test_empty_and_one_word_drafts_get_the_guard_reward():
    reply = "Yes. Rest today."
    # without the guard "Yes." would score P 1, R 1/2: F1 2/3
    assert rewards(exact_reward(min_words=1), ["Yes."], reply) == [pytest.approx(2 / 3)]
    details = exact_reward().details(
        ["", "Yes.", "Rest, today"], reference=[reply] * 3, message=["m"] * 3
    )
    assert [(d.reward, d.guard) for d in details] == [
        (0.0, "too_short"),
        (0.0, "too_short"),
        (pytest.approx(2 / 3), None),  # two words are scored: EM 1, EA 1, ED 0
    ]
    assert rewards(exact_reward(guard_reward=-1.0), ["Yes."], reply) == [-1.0]


def test_copying_the_patients_message_gets_the_guard_reward():
    message = "I have had a dry cough for six weeks."
    reply = "I have had a dry cough for six weeks. Stop the lisinopril."
    # a reply that restates the message: copying it scores EM 1, EA 1, ED 0 = 2/3 ...
    assert rewards(exact_reward(message_column=None), [message], reply, message) == [
        pytest.approx(2 / 3)
    ]
    # ... the guard gives 0.0: all 7 trigrams of the draft are the message's
    [detail] = exact_reward().details([message], reference=[reply], message=[message])
    assert (detail.reward, detail.guard, detail.copied_fraction) == (0.0, "copied_message", 1.0)
    # 8 words, 6 trigrams, 3 from the message ("i have had", "have had a", "had a dry"):
    # 3/6 = 0.5, not above the limit, so it is scored (EM 0: F1 0)
    draft = "I have had a dry spell. Stop lisinopril."
    assert copied_fraction(draft, message) == 0.5
    [detail] = exact_reward().details([draft], reference=[reply], message=[message])
    assert (detail.guard, detail.copied_fraction) == (None, 0.5)
    # two-word drafts use bigrams
    assert copied_fraction("dry cough", message) == 1.0


def test_repeated_sentences_count_once_as_matches_and_the_rest_as_deletions():
    positional = EditF1Scorer(PositionalJudge(), None)
    reply = "Rest today. Rest up at home."
    # the positional judge matches both reply sentences to the two copies: F1 1.0
    # without the guard; with it the copy is removed and counted as a deletion:
    # EM 1, EA 1, ED 0 + 1 repeat = 2/(2+1+1)
    assert positional.score(["Rest today. Rest today."], [reply]).f1 == 1.0
    reward = EditF1Reward(positional)
    [detail] = reward.details(["Rest today. REST today!"], reference=[reply], message=["m"])
    assert (detail.reward, detail.repeated_sentences) == (0.5, 1)
    # the exact judge: "Rest today." x3 against REPLY: EM 1, EA 1, ED 2 repeats = 2/5
    assert rewards(exact_reward(), ["Rest today. Rest today. Rest today."]) == [pytest.approx(0.4)]


def test_long_drafts_pay_one_deletion_per_extra_sentence_and_extreme_ones_the_guard():
    # the reply's 2 sentences plus k = 3 unrelated ones: 2n/(2n+k) = 4/7
    draft = "Rest today. Drink water. Call us. Eat well. Sleep early."
    assert rewards(exact_reward(), [draft]) == [pytest.approx(4 / 7)]
    # 10 words: over max_words 9, the guard; at 10 it is scored
    [detail] = exact_reward(max_words=9).details([draft], reference=[REPLY], message=["m"])
    assert (detail.reward, detail.guard, detail.content_f1) == (0.0, "too_long", None)
    assert rewards(exact_reward(max_words=10), [draft]) == [pytest.approx(4 / 7)]


def test_theme_and_mixed_rewards():
    scorer = EditF1Scorer("exact", KeywordThemeJudge())
    reply = "Rest today. Call us if it gets worse."
    draft = "Rest today. Rest at home."
    # content: EM 1, EA 1, ED 1 = 0.5; themes: reply {planning, contingency}, draft
    # {planning}: tp 1, fp 0, fn 1 = P 1, R 1/2, F1 2/3
    [detail] = EditF1Reward(scorer, level="theme").details(
        [draft], reference=[reply], message=["m"]
    )
    assert (detail.content_f1, detail.theme_f1) == (0.5, pytest.approx(2 / 3))
    assert detail.reward == pytest.approx(2 / 3)
    mixed = EditF1Reward(scorer, level="mix", theme_weight=0.25)
    assert rewards(mixed, [draft], reply) == [pytest.approx(0.75 * 0.5 + 0.25 * 2 / 3)]
    # a themeless draft for a themeless reply agrees on the themes (prf(0, 0, 0) = 1)
    assert rewards(EditF1Reward(scorer, level="theme"), ["Hello there."], "Hi. Thanks.") == [1.0]


def test_several_replies_score_against_the_best():
    reward = exact_reward()
    out = reward(
        prompts=["p"],
        completions=["Drink water. Call us."],
        reference=[["Rest today.", "Drink water. Call us."]],
        message=["m"],
    )
    assert out == [1.0]


def test_bad_columns_and_options_are_named():
    reward = exact_reward()
    with pytest.raises(KeyError, match=r"no column 'reference'.*'message'"):
        reward(prompts=["p"], completions=["Rest."], message=["m"], trainer_state=None)
    with pytest.raises(KeyError, match="no column 'message'"):
        reward(prompts=["p"], completions=["Rest."], reference=[REPLY])
    with pytest.raises(ValueError, match="column 'message' has 2 values for 1"):
        reward(prompts=["p"], completions=["Rest."], reference=[REPLY], message=["m", "n"])
    with pytest.raises(InputError, match=r"reference\[1\] has no word"):
        rewards(reward, ["Rest.", "Rest."], reference=" ")
    with pytest.raises(ValueError, match="level 'theme' needs a scorer with a theme judge"):
        exact_reward(level="theme")
    with pytest.raises(ValueError, match="theme_weight must be in"):
        EditF1Reward(EditF1Scorer("exact", KeywordThemeJudge()), level="mix", theme_weight=2)
    with pytest.raises(ValueError, match="min_words <= max_words"):
        exact_reward(min_words=5, max_words=4)
    for guard in (float("nan"), float("inf")):  # NaN was returned to trl as a reward
        with pytest.raises(ValueError, match="guard_reward must be a finite number"):
            exact_reward(guard_reward=guard)
    with pytest.raises(InputError, match=r"message\[0\] must be a string, got None"):
        reward(prompts=["p"], completions=["Rest."], reference=[REPLY], message=[None])


def test_guards_are_logged_through_trls_callbacks():
    metrics, extra = {}, {}
    reward = exact_reward()
    out = reward(
        prompts=["p"] * 4,
        completions=["", "My knee hurts.", "Rest today.", "Drink water."],
        reference=[REPLY] * 4,
        message=["My knee hurts."] * 4,
        log_metric=metrics.__setitem__,
        log_extra=extra.__setitem__,
    )
    assert out == [0.0, 0.0, pytest.approx(2 / 3), pytest.approx(2 / 3)]
    assert metrics == {
        "edit_f1/too_short": 0.25,
        "edit_f1/too_long": 0.0,
        "edit_f1/copied_message": 0.25,
    }
    assert extra == {"edit_f1_guard": ["too_short", "copied_message", "", ""]}
    assert reward.__name__ == "edit_f1"


@pytest.mark.slow
def test_embedded_judge_reward_is_deterministic_and_encodes_each_reply_once(monkeypatch):
    reward = EditF1Reward()  # the embedded content judge
    encoder = reward.scorer.content_judge.encoder
    seen: list[str] = []
    encode = encoder.model.encode

    def recording(texts, *args, **kwargs):
        seen.extend(texts)
        return encode(texts, *args, **kwargs)

    monkeypatch.setattr(encoder.model, "encode", recording)
    replies = ["Keep the splint on for nine more days.", "Ice the wrist at bedtime."]
    reply = " ".join(replies)
    step1 = ["Keep the splint on for nine more days. Call us.", "Ice it."]
    step2 = ["Ice the wrist at bedtime, please.", "Wear the splint for nine days."]
    first = rewards(reward, step1, reply)
    assert set(replies) <= set(seen)  # encoded at the first step ...
    seen.clear()
    second = rewards(reward, step2, reply)
    assert not set(replies) & set(seen)  # ... and never again
    assert rewards(reward, step1, reply) == first and rewards(reward, step2, reply) == second
    expected = reward.scorer.score(step1 + step2, [reply] * 4).pairs
    assert [*first, *second] == [p.content.f1 for p in expected]  # no guard, no repeat


class RecordingReward:
    """Calls ``reward`` and records each call's completions, replies and messages."""

    def __init__(self, reward: EditF1Reward) -> None:
        self.reward, self.__name__, self.calls = reward, reward.__name__, []

    def __call__(self, prompts, completions, **columns):
        texts = [completion_text(c) for c in completions]
        self.calls.append((texts, columns["reference"], columns["message"]))
        return self.reward(prompts, completions, **columns)


def test_grpo_trainer_runs_with_the_reward_and_logs_it_beside_the_loss(tmp_path):
    pytest.importorskip("trl", reason="trl is not installed (pip install 'edit-f1[train]')")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from editf1.judges.generative.tiny import build_tiny_causal_lm

    # the tiny model answers "Rest today. Call us." to any prompt, so by hand (exact judge):
    # against REPLY EM 1, EA 1, ED 1 -> F1 0.5; against itself 1.0; a message whose word
    # 3-grams hold both of the answer's is copied (fraction 1 > 0.5) -> guard_reward 0.0
    answer, copying = "Rest today. Call us.", "Can I rest today, call us later?"
    folder = build_tiny_causal_lm(tmp_path / "tiny", answer=answer)
    expected = {
        (REPLY, "My knee hurts."): 0.5,
        (answer, "My knee hurts."): 1.0,
        (REPLY, copying): 0.0,
    }
    rows = [
        {"prompt": [{"role": "user", "content": m}], "reference": r, "message": m}
        for r, m in expected
    ]
    config = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=2,
        num_generations=2,  # one prompt, two completions per step
        max_completion_length=16,
        max_steps=3,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        seed=0,
    )
    reward = RecordingReward(exact_reward())
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(folder),
        processing_class=AutoTokenizer.from_pretrained(folder),
        reward_funcs=[reward],
        args=config,
        train_dataset=Dataset.from_list(rows),
    )
    trainer.train()
    logged = [log for log in trainer.state.log_history if "loss" in log]
    assert len(logged) == len(reward.calls) == 3
    for log, (texts, references, messages) in zip(logged, reward.calls):
        assert texts == [answer, answer]
        by_hand = [expected[key] for key in zip(references, messages)]
        assert log["rewards/edit_f1/mean"] == pytest.approx(sum(by_hand) / 2)
        assert log["edit_f1/copied_message"] == (1.0 if messages[0] == copying else 0.0)
        assert log["edit_f1/too_short"] == 0.0
    # one epoch: each row's prompt drawn once (in the sampler's order)
    assert sorted(log["rewards/edit_f1/mean"] for log in logged) == pytest.approx([0.0, 0.5, 1.0])


def test_the_training_page_quotes_the_guards_defaults_and_existing_examples():
    import inspect
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "training.md").read_text(encoding="utf-8")
    defaults = inspect.signature(EditF1Reward).parameters
    for name in ("min_words", "max_words", "max_copied_fraction"):
        assert f"`{name}={defaults[name].default}`" in page, name
    assert "`guard_reward` (0.0)" in page and defaults["guard_reward"].default == 0.0
    for example in ("grpo_with_edit_f1.py", "dpo_with_edit_f1_pairs.py"):
        assert f"examples/{example}" in page and (root / "examples" / example).is_file()
