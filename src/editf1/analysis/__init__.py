"""Reading scored runs back.

* :mod:`.compare`: runs loaded from disk and paired comparisons of systems (bootstrap CIs);
* :mod:`.report`: ``edit-f1 report``, HTML and Markdown reports with plots;
* :mod:`.inter_annotator`: the human ceiling, each clinician's reply scored against another's.
"""
