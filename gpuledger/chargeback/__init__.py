"""Chargeback: the month lifecycle (open, closed, restated) and the statement data issued for a closed month."""
