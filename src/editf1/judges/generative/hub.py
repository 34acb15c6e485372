"""Judges as Hub artefacts: ``edit-f1 push-judge`` uploads an adapter folder and its card,
to a private repository unless asked otherwise; nothing else in edit-f1 uploads a judge.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from editf1.judges.generative.loading import JUDGE_CONFIG, read_judge_config

__all__ = ["UPLOADED_FILES", "push_judge"]

#: The files of an adapter folder ``push_judge`` uploads (its top level only).
UPLOADED_FILES = (
    "adapter_config.json",
    "adapter_model.safetensors",
    JUDGE_CONFIG,
    "README.md",
    "confusion_matrix.png",
)


def push_judge(
    folder: str | Path, repo_id: str, *, private: bool = True, token: str | None = None
) -> str:
    """Upload an edit-F1 judge adapter's :data:`UPLOADED_FILES` (top level only; a warning
    names what was left out) to the Hub model repository ``repo_id``, created private unless
    ``private=False`` (which a public one needs); return the commit's URL. Network: yes.

    Raises:
        ModelNotAvailableError: ``folder`` is not an edit-F1 judge adapter.
        FileNotFoundError: it has no ``README.md`` model card.
        PermissionError: ``repo_id`` is public and ``private`` is True.
    """
    from huggingface_hub import CommitOperationAdd, HfApi, ModelCard

    folder = Path(folder)
    record = read_judge_config(folder)
    card = folder / "README.md"
    if not card.is_file():
        raise FileNotFoundError(
            f"{folder} has no README.md model card; `edit-f1 train-judge` writes one with the "
            "adapter"
        )
    ModelCard.load(card)
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    if private and not api.repo_info(repo_id, repo_type="model").private:
        raise PermissionError(
            f"{repo_id} exists and is public: refusing to upload the judge there (pass "
            "--public / private=False if it is meant to be public)"
        )
    sent = [name for name in UPLOADED_FILES if (folder / name).is_file()]
    left_out = sorted(p.name for p in folder.iterdir() if p.name not in sent)
    if left_out:
        warnings.warn(
            f"push-judge left out {len(left_out)} entries of {folder} that are not adapter "
            f"files: {', '.join(left_out)}",
            UserWarning,
            stacklevel=2,
        )
    commit = api.create_commit(
        repo_id=repo_id,
        repo_type="model",
        operations=[CommitOperationAdd(name, str(folder / name)) for name in sent],
        commit_message=f"edit-f1 {record.get('task')} judge adapter ({record.get('prompt')})",
    )
    return str(getattr(commit, "commit_url", commit))
