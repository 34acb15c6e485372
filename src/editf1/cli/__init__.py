"""The ``edit-f1`` command; ``python -m editf1.cli`` runs it too.

The rule: one module per command group, named after the part of the library it fronts
(:data:`~editf1.cli.main.COMMAND_GROUPS`), each with one ``add_commands(commands)``. A
command's run function imports the library when it runs (so ``edit-f1 --help`` loads no
model library) and raises ``ValueError`` or ``OSError`` for a user error; :mod:`.main` alone
turns those into ``edit-f1: error: ...`` (one line, or one per bad row) and exit status 2
(130 / 143 for Ctrl-C / SIGTERM). What every command does alike: :mod:`.conventions`.
"""

from editf1.cli.main import main

__all__ = ["main"]
