"""Advice: per-run counterfactuals after showback (right-sizing, spot, checkpoints, notebook auto-stop, owned vs
rented) and the savings opportunities per team and month. Every figure is an ESTIMATE kept in the advice
schema, apart from billed money (docs/decisions/0015)."""
