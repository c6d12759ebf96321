"""Contracts as data: FOCUS, the providers' formats and reference tables, deliveries, configuration, errors and
the billing month. Imports no other project package."""
