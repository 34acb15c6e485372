"""No telemetry: the usage reporting of the libraries edit-f1 uses, switched off.

huggingface_hub (``HF_HUB_DISABLE_TELEMETRY``) and gradio (``GRADIO_ANALYTICS_ENABLED``)
can each report usage, device ids, paths or errors to their vendor. :func:`telemetry_off`
switches both off; importing ``editf1`` calls it, and so does the place that starts
gradio (:mod:`editf1.integrations.demo`), so it holds even where a library was imported
first or the environment was changed since.
"""

from __future__ import annotations

import os
import sys

__all__ = ["TELEMETRY_SWITCHES", "telemetry_off"]

#: The environment switches :func:`telemetry_off` sets (over any value already there).
TELEMETRY_SWITCHES = {"HF_HUB_DISABLE_TELEMETRY": "1", "GRADIO_ANALYTICS_ENABLED": "False"}


def telemetry_off() -> None:
    """Switch off the telemetry of huggingface_hub and gradio in this process: the
    environment switches of :data:`TELEMETRY_SWITCHES`, and the constant that an already
    imported ``huggingface_hub`` read from them. Nothing is imported here."""
    os.environ.update(TELEMETRY_SWITCHES)
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_DISABLE_TELEMETRY = True
