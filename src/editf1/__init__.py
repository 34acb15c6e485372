"""edit-F1: how much would a clinician edit this LLM-drafted reply to a patient message?"""
