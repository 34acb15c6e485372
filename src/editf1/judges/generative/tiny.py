"""A tiny, randomly initialised causal LM (a 2-layer Llama and a byte-level BPE tokenizer
trained on a few sentences) built here for tests and benchmarks; its answers are meaningless.
"""

from __future__ import annotations

from pathlib import Path

from editf1.data import read_text

__all__ = ["CHATML_TEMPLATE", "build_tiny_causal_lm"]

#: The ChatML template SmolLM2-Instruct uses (system / user / assistant turns).
CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

#: The text the tokenizer is trained on (``editf1/data/tiny_corpus.txt``).
_CORPUS = read_text("tiny_corpus.txt").strip()


def build_tiny_causal_lm(
    folder: str | Path,
    *,
    seed: int = 0,
    vocab_size: int = 400,
    context: int = 1024,
    init_std: float = 0.5,
    chat_template: bool = True,
    answer: str | None = None,
) -> Path:
    """Build and save a tiny random Llama and its tokenizer; return ``folder``. ``init_std``
    is large so that answers vary; ``answer``: greedy generation with the saved generation
    config answers this text, then stops, whatever the prompt (for testing a server).
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        [_CORPUS] * 4,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
    )
    if chat_template:
        tokenizer.chat_template = CHATML_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
        initializer_range=init_std,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    if answer is not None:
        ids = [*tokenizer(answer, add_special_tokens=False).input_ids, tokenizer.eos_token_id]
        model.generation_config.sequence_bias = [
            [ids[:k], 100.0 * k] for k in range(1, len(ids) + 1)
        ]
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder
