"""No telemetry: huggingface_hub's and gradio's usage reporting switched off, at ``import
editf1`` and again where gradio starts (:mod:`editf1.integrations.demo`).
"""

from __future__ import annotations

import os
import sys

__all__ = ["TELEMETRY_SWITCHES", "telemetry_off"]

#: The environment switches :func:`telemetry_off` sets (over any value already there).
TELEMETRY_SWITCHES = {"HF_HUB_DISABLE_TELEMETRY": "1", "GRADIO_ANALYTICS_ENABLED": "False"}


def telemetry_off() -> None:
    """Set :data:`TELEMETRY_SWITCHES`, and the constant an imported huggingface_hub read."""
    os.environ.update(TELEMETRY_SWITCHES)
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_DISABLE_TELEMETRY = True
