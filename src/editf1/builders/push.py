"""Uploading a Hub-ready dataset folder (:mod:`editf1.builders.hub`), only when asked:
private repositories for patient data, never a third party's set."""

from __future__ import annotations

from pathlib import Path

from huggingface_hub import DatasetCard

from editf1.builders import builder_class
from editf1.builders.base import EditF1Builder

__all__ = ["UPLOADED_PATTERNS", "check_pushable", "push_to_hub"]


#: What :func:`push_to_hub` uploads from a folder (any other file there stays).
UPLOADED_PATTERNS = ("README.md", "data/*")


def check_pushable(name: str | type[EditF1Builder], *, private: bool = True) -> type[EditF1Builder]:
    """The builder class of ``name`` if this library may upload its data.

    Raises:
        ValueError: for a third party's set, or a public upload of patient data.
    """
    cls = builder_class(name) if isinstance(name, str) else name
    if not cls.PUSHABLE:
        raise ValueError(
            f"{cls.DATASET_NAME} is a third party's data set: upload it only as its owners "
            "allow, not with edit-f1"
        )
    if cls.CONTAINS_PATIENT_DATA and not private:
        raise ValueError(
            f"{cls.DATASET_NAME} holds patient data: it may only go to a private repository"
        )
    return cls


def push_to_hub(
    name: str | type[EditF1Builder],
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = True,
    token: str | None = None,
) -> str:
    """Upload a Hub-ready folder's README.md and ``data/`` (:data:`UPLOADED_PATTERNS`),
    written by builder ``name``, to the dataset repository ``repo_id`` (created private
    unless ``private`` is False; ``token`` None: the logged-in one); the commit's URL.

    Raises:
        ValueError: see :func:`check_pushable`.
        PermissionError: for patient data and a ``repo_id`` that exists and is public.
        FileNotFoundError: if the folder has no README.md card.
    """
    from huggingface_hub import HfApi

    cls = check_pushable(name, private=private)
    folder = Path(folder)
    DatasetCard.load(folder / "README.md")  # a readable card, or an error
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    if cls.CONTAINS_PATIENT_DATA and not api.repo_info(repo_id, repo_type="dataset").private:
        raise PermissionError(
            f"{repo_id} exists and is public: refusing to upload patient data to it"
        )
    commit = api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        repo_type="dataset",
        commit_message=f"edit-f1 export of {cls.DATASET_NAME}",
        allow_patterns=list(UPLOADED_PATTERNS),
    )
    return str(getattr(commit, "commit_url", commit))
