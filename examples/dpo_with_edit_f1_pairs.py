"""DPO on preference pairs ranked by edit-F1, on a CPU in minutes (beta 0.01, as in
Seegmiller et al., Appendix D).

Pairs come from one of the two sources of :mod:`editf1.training.preferences`:

* ``--source drafts`` (default): for each message of the demo set, its shipped draft and
  ``--samples`` drafts sampled from the model being trained are scored by
  :class:`~editf1.training.rewards.EditF1Reward`; the best is chosen over the worst;
* ``--source tadpole``: the model drafts r, r+ and r− for each clinical theme of the
  clinician's reply, paired with ``--strategy`` (Appendix D.3).

The model is a tiny random-init Llama built here (``--model tiny``, the default) or any
local causal LM folder with a chat template. Nothing is downloaded. With the tiny model
the numbers mean nothing: the run proves the wiring.

    pip install 'edit-f1[train]'
    python examples/dpo_with_edit_f1_pairs.py
    python examples/dpo_with_edit_f1_pairs.py --source tadpole --strategy hard-corrupted
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import DPOConfig, DPOTrainer

from editf1.builders.readers import demo_rows
from editf1.drafting.generators import CausalLMGenerator
from editf1.drafting.prompts import zero_shot_messages
from editf1.judges import load_theme_judge
from editf1.judges.generative.tiny import build_tiny_causal_lm
from editf1.scorer import EditF1Scorer
from editf1.training.preferences import (
    TADPOLE_STRATEGIES,
    pair_dataset,
    scored_draft_pairs,
    tadpole_pairs,
    tadpole_tuples,
)
from editf1.training.rewards import EditF1Reward


def drafts_pairs(rows, model_path, args):
    """The shipped draft and sampled drafts per message, best over worst."""
    sampler = CausalLMGenerator(
        str(model_path), max_new_tokens=args.max_new_tokens, temperature=1.0, seed=0
    )
    prompts = [zero_shot_messages(r["message"], r["ehr_summary"]) for r in rows]
    sampled = sampler.generate(prompts, num_return_sequences=args.samples)
    drafts = [
        {**row, "message_id": row["id"], "prediction": draft}
        for row, extra in zip(rows, sampled)
        for draft in [row["prediction"], *extra]
    ]
    dataset, counts = scored_draft_pairs(drafts, EditF1Reward(EditF1Scorer(args.judge, None)))
    print(f"pairs: {counts}")
    return dataset


def tadpole_dataset(rows, model_path, args):
    """r / r+ / r- per clinical theme of each reply, paired with --strategy."""
    generator = CausalLMGenerator(str(model_path), max_new_tokens=args.max_new_tokens)
    keyed = [{**row, "message_id": row["id"]} for row in rows]
    tuples = tadpole_tuples(keyed, generator, load_theme_judge("embedding"))
    pairs, unchanged = tadpole_pairs(tuples, args.strategy)
    print(f"{len(pairs)} pair(s) from {len(tuples)} tuple(s); {unchanged} unchanged dropped")
    return pair_dataset(pairs, ["theme", "strategy"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="tiny (default) or a local folder")
    parser.add_argument("--source", default="drafts", choices=["drafts", "tadpole"])
    parser.add_argument("--strategy", default="hard-corrupted", choices=list(TADPOLE_STRATEGIES))
    parser.add_argument("--judge", default="embedding", choices=["embedding", "exact"])
    parser.add_argument("--samples", type=int, default=2, help="drafts sampled per message")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--max-steps", type=int, default=4)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="edit-f1-dpo-"))
    model_path = build_tiny_causal_lm(work / "tiny") if args.model == "tiny" else Path(args.model)
    rows = demo_rows()
    make = drafts_pairs if args.source == "drafts" else tadpole_dataset
    dataset = make(rows, model_path, args)
    if dataset.num_rows == 0:
        raise SystemExit("no pair to train on")
    config = DPOConfig(
        output_dir=str(work / "out"),
        beta=0.01,
        learning_rate=5e-6,
        per_device_train_batch_size=2,
        max_steps=args.max_steps,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        seed=0,
    )
    trainer = DPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_path),
        args=config,
        train_dataset=dataset,
        processing_class=AutoTokenizer.from_pretrained(model_path),
    )
    trainer.train()
    columns = ["loss", "rewards/margins", "rewards/accuracies"]
    print("step  " + "  ".join(columns))
    for log in trainer.state.log_history:
        if "loss" in log:
            values = "  ".join(f"{log.get(c, float('nan')):>{len(c)}.4f}" for c in columns)
            print(f"{log['step']:>4}  {values}")


if __name__ == "__main__":
    main()
