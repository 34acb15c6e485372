"""Installed library versions, for provenance."""

from __future__ import annotations

import importlib.metadata


def installed_versions(*packages: str) -> dict[str, str]:
    """``{package: version}``, ``"absent"`` where a distribution is not installed.

    >>> installed_versions("no-such-package-xyz")
    {'no-such-package-xyz': 'absent'}
    """
    out = {}
    for name in packages:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    return out
