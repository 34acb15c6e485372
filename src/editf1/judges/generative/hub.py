"""Judges as Hub artefacts: upload an adapter folder and its model card, only when asked.

``edit-f1 push-judge FOLDER ORG/NAME`` calls :func:`push_judge`; nothing else in
edit-f1 uploads a judge. The repository is private unless the user asks for a public
one: an adapter is fitted on clinical text and its card says on which.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from editf1.judges.generative.loading import JUDGE_CONFIG, read_judge_config

__all__ = ["UPLOADED_FILES", "push_judge"]

#: The files of an adapter folder ``push_judge`` uploads, by name, from the folder's top
#: level only: what ``edit-f1 train-judge llm-*`` writes there.
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
    """Upload an edit-F1 judge adapter and its card to a Hub model repository. Network: yes.

    Only the files an adapter consists of are sent, named one by one
    (:data:`UPLOADED_FILES`: ``adapter_config.json``, ``adapter_model.safetensors``,
    ``editf1_judge.json``, ``README.md``, ``confusion_matrix.png``), from the folder's
    top level: never another file or a subfolder (labelled items, drafts or a copy of a
    data set kept beside the adapter), whatever its name ends with. A warning names
    what was left out.

    Args:
        folder: an adapter folder written by ``edit-f1 train-judge llm-*``
            (``adapter_model.safetensors``, ``editf1_judge.json``, ``README.md``).
        repo_id: the model repository, ``"org/name"``; created if it does not exist.
        private: create it private (default); an existing public repository is refused
            unless ``private=False``.
        token: a Hub token; default the logged-in one (``hf auth login``, ``HF_TOKEN``).

    Returns:
        The URL of the upload commit.

    Raises:
        ModelNotAvailableError: ``folder`` is not an edit-F1 judge adapter.
        FileNotFoundError: it has no ``README.md`` model card (``edit-f1 train-judge``
            writes one).
        PermissionError: ``repo_id`` exists as a public repository and ``private`` is True.
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
    ModelCard.load(card)  # a readable card, or an error
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
