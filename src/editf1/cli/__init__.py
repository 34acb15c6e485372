"""The ``edit-f1`` command; ``python -m editf1.cli`` runs it too.

The rule: one module per command group, named after the part of the library it fronts
(the groups: :data:`~editf1.cli.main.COMMAND_GROUPS`), each with one
``add_commands(commands)`` that registers its commands. A command's options and run
function live in its group's module; the run function imports the library when it runs
(so ``edit-f1 --help`` loads no model library) and raises ``ValueError`` or ``OSError``
for a user error. :mod:`.main` alone holds the parser and turns those into ``edit-f1:
error: ...`` and exit status 2 (130 / 143 for Ctrl-C / SIGTERM); :mod:`.conventions`
holds what every command does alike (``-`` for standard streams, output checks).
"""

from editf1.cli.main import main

__all__ = ["main"]
