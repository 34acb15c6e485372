"""The ``edit-f1`` command; ``python -m editf1.cli`` runs it too."""

from editf1.cli.main import main

__all__ = ["main"]
