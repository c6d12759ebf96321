"""Telemetry: jobs and hourly GPU activity from every configured source into ``gpu.*``, for the split."""
