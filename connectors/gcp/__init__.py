"""Google Cloud: Cloud Billing export tables in BigQuery, extracted per invoice month, and Cloud Billing lookups."""
