"""AWS: CUR 1 and Data Exports (CUR 2.0, FOCUS) deliveries in S3, found by their manifests and pulled with boto3."""
