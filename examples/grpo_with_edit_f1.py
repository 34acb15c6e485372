"""A few GRPO steps toward fewer clinician edits: edit-F1 as trl's reward, on a CPU.

:class:`editf1.training.rewards.EditF1Reward` scores every sampled draft against the
clinician's reply of the demo set; trl's ``GRPOTrainer`` logs its mean
(``rewards/edit_f1/mean``) and the share of drafts each gaming guard stopped
(``edit_f1/too_short``, ...) beside the loss, printed as a table at the end.

The model is a tiny random-init Llama built here (``--model tiny``, the default) or any
local causal LM folder with a chat template (``--model path/to/folder``). Nothing is
downloaded. With the tiny model the numbers mean nothing: the run proves the wiring.

    pip install 'edit-f1[train]'
    python examples/grpo_with_edit_f1.py                   # 4 steps, embedded judge
    python examples/grpo_with_edit_f1.py --judge exact --max-steps 2
    python examples/grpo_with_edit_f1.py --level mix --theme-weight 0.3
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from editf1.builders.readers import demo_rows
from editf1.integrations.callback import DEFAULT_SYSTEM_PROMPT
from editf1.judges.generative.tiny import build_tiny_causal_lm
from editf1.scorer import EditF1Scorer
from editf1.training.rewards import GUARDS, EditF1Reward


def prompt(row: dict) -> list[dict]:
    """The conversational prompt of one demo row: instruction, EHR summary, message."""
    user = f"EHR summary:\n{row['ehr_summary']}\n\nPatient message:\n{row['message']}"
    return [
        {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="tiny (default) or a local folder")
    parser.add_argument("--judge", default="embedding", choices=["embedding", "exact"])
    parser.add_argument("--level", default="content", choices=["content", "theme", "mix"])
    parser.add_argument("--theme-weight", type=float, default=0.5)
    parser.add_argument("--max-steps", type=int, default=4)
    parser.add_argument("--max-completion-length", type=int, default=48)
    parser.add_argument("--output-dir", type=Path, help="default: a temporary folder")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="edit-f1-grpo-"))
    model_path = build_tiny_causal_lm(work / "tiny") if args.model == "tiny" else args.model
    rows = demo_rows()
    dataset = Dataset.from_list(
        [{"prompt": prompt(r), "reference": r["reference"], "message": r["message"]} for r in rows]
    )
    theme_judge = None if args.level == "content" else "embedding"
    reward = EditF1Reward(
        EditF1Scorer(args.judge, theme_judge), level=args.level, theme_weight=args.theme_weight
    )
    config = GRPOConfig(
        output_dir=str(args.output_dir or work / "out"),
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=args.max_completion_length,
        max_steps=args.max_steps,
        learning_rate=1e-5,
        beta=0.0,  # no reference model: half the memory and time
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        seed=0,
    )
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_path),
        processing_class=AutoTokenizer.from_pretrained(model_path),
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
    )
    trainer.train()

    columns = [
        "loss",
        "rewards/edit_f1/mean",
        "rewards/edit_f1/std",
        *(f"edit_f1/{g}" for g in GUARDS),
    ]
    print("step  " + "  ".join(columns))
    for log in trainer.state.log_history:
        if "loss" in log:
            print(
                f"{log['step']:>4}  "
                + "  ".join(f"{log.get(c, float('nan')):>{len(c)}.4f}" for c in columns)
            )


if __name__ == "__main__":
    main()
