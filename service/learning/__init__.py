"""Suggested tags learned in the background: when a project's tagged set has changed enough,
on Refresh, and for the queries an import added (service/learning/learner.py)."""
