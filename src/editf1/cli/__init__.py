"""The ``edit-f1`` command; ``python -m editf1.cli`` runs it too.

The rule: one module per command group, named after the part of the library it fronts,
each with one ``add_commands(commands)`` that registers its commands on the subparsers:

* :mod:`.scoring`: ``score`` (:mod:`editf1.scorer`, :mod:`editf1.integrations.distributed`);
* :mod:`.judges`: ``train-judge``, ``agreement``, ``merge-judge``, ``push-judge``
  (:mod:`editf1.judges`, :mod:`editf1.validation`, :mod:`editf1.cards`), and the
  ``--*-judge-option`` flags every command that loads a judge takes;
* :mod:`.datasets`: ``export-dataset`` (:mod:`editf1.builders`), and the dataset options
  of ``score --dataset`` and ``draft --dataset``;
* :mod:`.analysis`: ``report``, ``iap`` (:mod:`editf1.analysis`);
* :mod:`.integrations`: ``install-metric``, ``demo`` (:mod:`editf1.integrations`);
* :mod:`.training`: ``preference-pairs`` (:mod:`editf1.training`);
* :mod:`.drafting`: ``draft`` (:mod:`editf1.drafting`), and the generator options that
  ``preference-pairs --tadpole`` shares;
* :mod:`.gold`: ``sample-for-labels``, ``annotate`` (:mod:`editf1.gold`,
  :mod:`editf1.integrations.annotate`), and the ``--gold`` options of ``score``.

A command's options and its run function live in its group's module; the run function
imports the library when it runs (so ``edit-f1 --help`` loads no model library) and
raises ``ValueError`` or ``OSError`` for a user error. :mod:`.main` alone holds the parser
(:func:`~editf1.cli.main.build_parser`, the groups in
:data:`~editf1.cli.main.COMMAND_GROUPS`) and the error convention (``edit-f1: error:
...``, exit status 2; 130 / 143 for Ctrl-C / SIGTERM); :mod:`.conventions` holds what
every command does alike (``-`` for standard streams, output checks). :mod:`.summary`
and :mod:`.progress` format the summary table and hide progress bars.
"""

from editf1.cli.main import main

__all__ = ["main"]
