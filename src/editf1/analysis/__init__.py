"""Reading scored runs back: comparing systems with paired CIs, reports, several references."""
