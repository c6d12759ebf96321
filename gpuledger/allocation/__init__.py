"""Allocation: every FOCUS charge of a month split into run / idle / checkpoint storage / egress / other per
team and job, exchange rates, and the showback tables built from the split."""
