"""What reproduces the project's own figures, kept outside the ``editf1`` package.

The package (``src/editf1``) holds what a user calls; this folder holds what only the
project team runs to make its own figures, datasets cards and model cards. It may import
``editf1``; ``editf1`` never imports it (``tests/test_architecture.py``). It is not
installed (``setup.cfg`` lists the package's folders only): import it from the
repository root, where ``python -m research.<module>`` runs a script, the tests put the
root on ``sys.path`` (``tests/conftest.py``), and so do the benchmark scripts
(``benchmarks/benchlib.py``).

* :mod:`.team_labels`: the team's first label sets on real text (themes; OncQA content
  matches), stored by reference, their loaders and the figures of their dataset cards;
* :mod:`.stage2_labels`: content labels derived from OncQA's stage-2 edits;
* :mod:`.content_labels`: the second and third rounds of content labels (one sentence
  against several drafts);
* :mod:`.content_splits`: every content set, and one split by case across them;
* :mod:`.model_cards`: the shipped judges' model cards (``python -m research.model_cards``);
* :mod:`.theme_judge_fit`: the shipped v2 theme judge's hyperparameter choice and
  nested cross-validation on the team's theme labels (``benchmarks/theme_judge_real.py``);
* :mod:`.train_cross_encoder`: training the shipped cross-encoder judge on every team
  label set (``python -m research.train_cross_encoder``);
* :mod:`.docs_tables`: every table of figures in the documentation, written from
  ``benchmarks/results/`` (``python -m research.docs_tables``; the tables themselves in
  :mod:`.docs_figures`, :mod:`.docs_benchmarks` and :mod:`.docs_gold`);
* ``drafting_oncqa.sh``: the drafting baselines of the paper on OncQA (``edit-f1 draft``,
  ``score`` and ``report``; figures in ``benchmarks/results/drafting_oncqa/``).
"""
