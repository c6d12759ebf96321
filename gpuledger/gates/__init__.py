"""Gates: what a delivery must pass to be published (conformance, reconciliation, the ingestion contract, the
official validator), and the loader that writes, audits and admits or holds it in one transaction."""
