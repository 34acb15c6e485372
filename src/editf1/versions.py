"""Installed versions of the libraries a score or a judge depends on, for provenance
(the scorer's fingerprint, a trained judge's record, benchmark results)."""

from __future__ import annotations

import importlib.metadata


def installed_versions(*packages: str) -> dict[str, str]:
    """``{package: version}`` for each distribution name, ``"absent"`` where it is not
    installed.

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
