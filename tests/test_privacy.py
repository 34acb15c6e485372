"""No telemetry (editf1/privacy.py): importing edit-f1 switches off the usage reporting
of huggingface_hub and gradio, also where a library came first."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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
