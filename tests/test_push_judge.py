"""edit-f1 push-judge: an adapter and its card go to a private Hub model repository, only
when asked, only the adapter's files, and never to an existing public one unasked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from editf1.cli import main
from editf1.judges.generative.hub import push_judge
from editf1.judges.generative.loading import ModelNotAvailableError


class FakeApi:
    """Records HfApi calls; ``public`` says whether the repository exists as public."""

    calls: ClassVar[list] = []
    public = False

    def __init__(self, token=None):
        pass

    def create_repo(self, repo_id, **kwargs):
        FakeApi.calls.append(("create_repo", repo_id, kwargs))

    def repo_info(self, repo_id, **kwargs):
        return type("Info", (), {"private": not FakeApi.public})()

    def create_commit(self, **kwargs):
        sent = sorted(op.path_in_repo for op in kwargs["operations"])
        for op in kwargs["operations"]:  # each operation reads one file of the folder
            assert Path(op.path_or_fileobj).is_file()
        FakeApi.calls.append(("create_commit", kwargs["repo_id"], kwargs["repo_type"], sent))
        return type("Commit", (), {"commit_url": "https://hub/commit/1"})()


@pytest.fixture
def fake_hub(monkeypatch):
    import huggingface_hub

    FakeApi.calls, FakeApi.public = [], False
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    return FakeApi


@pytest.fixture
def adapter(tmp_path) -> Path:
    folder = tmp_path / "judge"
    folder.mkdir()
    (folder / "editf1_judge.json").write_text(json.dumps({"task": "theme", "prompt": "theme-v1"}))
    (folder / "adapter_model.safetensors").write_bytes(b"weights")
    (folder / "adapter_config.json").write_text("{}")
    (folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# A theme judge\n")
    (folder / "train_items.jsonl").write_text('{"text": "a clinical sentence"}\n')
    (folder / "gold_items.json").write_text('[{"text": "a clinical sentence"}]')
    (folder / "drafts").mkdir()  # *.json and *.md below the top level: never sent
    (folder / "drafts" / "README.md").write_text("a copy of a data set's card\n")
    (folder / "drafts" / "rows.json").write_text('[{"prediction": "a draft"}]')
    return folder


ADAPTER = ["README.md", "adapter_config.json", "adapter_model.safetensors", "editf1_judge.json"]


def test_push_judge_is_private_and_sends_only_the_adapter(adapter, fake_hub):
    with pytest.warns(UserWarning, match="left out 3 entries") as caught:
        assert push_judge(adapter, "org/judge") == "https://hub/commit/1"
    assert str(caught[0].message).endswith("drafts, gold_items.json, train_items.jsonl")
    assert fake_hub.calls == [
        ("create_repo", "org/judge", {"repo_type": "model", "private": True, "exist_ok": True}),
        ("create_commit", "org/judge", "model", ADAPTER),  # no item, draft or subfolder
    ]


@pytest.mark.filterwarnings("ignore:push-judge left out")
def test_an_existing_public_repository_is_refused_unless_public_is_asked(adapter, fake_hub):
    fake_hub.public = True
    with pytest.raises(PermissionError, match="exists and is public"):
        push_judge(adapter, "org/judge")
    assert [c[0] for c in fake_hub.calls] == ["create_repo"]  # nothing uploaded
    fake_hub.calls = []
    push_judge(adapter, "org/judge", private=False)
    assert fake_hub.calls[0][2]["private"] is False and fake_hub.calls[1][0] == "create_commit"


def test_a_folder_that_is_no_judge_or_has_no_card_is_refused(adapter, tmp_path, fake_hub):
    with pytest.raises(ModelNotAvailableError, match="not an edit-F1 judge adapter"):
        push_judge(tmp_path, "org/judge")
    (adapter / "README.md").unlink()
    with pytest.raises(FileNotFoundError, match=r"no README\.md model card"):
        push_judge(adapter, "org/judge")
    assert fake_hub.calls == []


@pytest.mark.filterwarnings("ignore:push-judge left out")
def test_the_command_uploads_private_by_default_and_public_when_asked(adapter, fake_hub, capsys):
    assert main(["push-judge", str(adapter), "org/judge"]) == 0
    assert "to the private model repository org/judge: https://hub/commit/1" in (
        capsys.readouterr().out
    )
    assert fake_hub.calls[0][2]["private"] is True
    fake_hub.calls = []
    assert main(["push-judge", str(adapter), "org/judge", "--public"]) == 0
    assert fake_hub.calls[0][2]["private"] is False
    (adapter / "editf1_judge.json").unlink()
    assert main(["push-judge", str(adapter), "org/judge"]) == 2
    assert "not an edit-F1 judge adapter" in capsys.readouterr().err
