"""Uploading a Hub-ready dataset folder (:mod:`editf1.builders.hub`), only when asked:
private repositories for patient data, never a third party's set. Network: yes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from huggingface_hub import DatasetCard

from editf1.builders.base import EditF1Builder
from editf1.builders.hub import write_builders

__all__ = ["UPLOADED_PATTERNS", "check_pushable", "push_builder", "push_to_hub"]


#: What :func:`push_to_hub` uploads from a folder: the card and the data files
#: :func:`write_hub_folder` wrote; any other file kept there (notes, the export itself) stays.
UPLOADED_PATTERNS = ("README.md", "data/*")


def check_pushable(name: str | type[EditF1Builder], *, private: bool = True) -> type[EditF1Builder]:
    """The builder class of ``name`` if this library may upload its data, so a command
    can refuse before it writes anything.

    Raises:
        ValueError: for a third party's set (its licence is its owners'), or a public
            upload of patient data (``CONTAINS_PATIENT_DATA``).
    """
    from editf1.builders import builder_class

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
    """Upload a Hub-ready folder written by :func:`write_hub_folder`: its README.md and
    ``data/`` only (:data:`UPLOADED_PATTERNS`). Network: yes.

    Args:
        name: the builder (name or class) the folder was written with; its class
            decides what is allowed.
        folder: the folder (README.md and ``data/``).
        repo_id: the Hub dataset repository, ``"org/name"``.
        private: create the repository private (default). Patient data
            (``CONTAINS_PATIENT_DATA``) may only go to a private repository.
        token: a Hub token; default the logged-in one.

    Returns:
        The URL of the upload commit.

    Raises:
        ValueError: for a set this library does not upload (third-party data whose
            licence is its owners'), or a public upload of patient data.
        PermissionError: if ``repo_id`` already exists as a public repository and the
            folder holds patient data.
        FileNotFoundError: if the folder has no README.md card.
    """
    from huggingface_hub import HfApi

    cls = check_pushable(name, private=private)
    name = cls.DATASET_NAME
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
        commit_message=f"edit-f1 export of {name}",
        allow_patterns=list(UPLOADED_PATTERNS),
    )
    return str(getattr(commit, "commit_url", commit))


def push_builder(
    builder: EditF1Builder, repo_id: str, *, private: bool = True, token: str | None = None
) -> str:
    """Upload one prepared builder config to the Hub as a Hub-ready folder. Network: yes.

    Call ``builder.download_and_prepare()`` first. Only on request: nothing else in the
    library uploads; :func:`push_to_hub` says what is allowed (patient data: private
    repositories only).

    Returns:
        The URL of the upload commit.
    """
    with tempfile.TemporaryDirectory(prefix="editf1-push-") as folder:
        write_builders([builder], folder)
        return push_to_hub(type(builder), folder, repo_id, private=private, token=token)
