"""Scored runs read back: runs loaded and compared (:mod:`.compare`), ``edit-f1 report``
(:mod:`.report`), the human ceiling (:mod:`.inter_annotator`)."""
