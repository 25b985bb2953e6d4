"""Explaining a model's attention: one module per idea (rollout, value norms, patterns, importance, induction, sinks)."""
