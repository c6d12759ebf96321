"""Reviewed AWS reference data: product code -> FOCUS service category, units, regions.

Loaded into DuckDB as ``ref.*`` tables that ``sql/normalize/aws_cur.sql`` joins. A product code that is
missing here lands in ``Other / Other (Other)`` (still conformant) and is reported by the
``aws_unmapped_services`` check so the table gets extended rather than silently guessed.
"""

from __future__ import annotations

# product code -> (ServiceCategory, ServiceSubcategory). Reviewed against the FOCUS 1.2 table.
AWS_SERVICE_CATEGORIES: dict[str, tuple[str, str]] = {
    "AmazonEC2": ("Compute", "Virtual Machines"),
    "AmazonEKS": ("Compute", "Containers"),
    "AmazonECS": ("Compute", "Containers"),
    "AWSLambda": ("Compute", "Serverless Compute"),
    "AWSBatch": ("Compute", "Other (Compute)"),
    "ComputeSavingsPlans": ("Compute", "Virtual Machines"),
    "AmazonSageMaker": ("AI and Machine Learning", "Machine Learning"),
    "MachineLearningSavingsPlans": ("AI and Machine Learning", "Machine Learning"),
    "AmazonBedrock": ("AI and Machine Learning", "Generative AI"),
    "AmazonS3": ("Storage", "Object Storage"),
    "AmazonS3GlacierDeepArchive": ("Storage", "Backup Storage"),
    "AmazonEFS": ("Storage", "File Storage"),
    "AmazonFSx": ("Storage", "File Storage"),
    "AWSBackup": ("Storage", "Backup Storage"),
    "AWSDataTransfer": ("Networking", "Network Connectivity"),
    "AmazonVPC": ("Networking", "Network Infrastructure"),
    "AmazonCloudFront": ("Networking", "Content Delivery"),
    "AmazonRoute53": ("Networking", "Network Routing"),
    "AWSELB": ("Networking", "Application Networking"),
    "AWSDirectConnect": ("Networking", "Network Connectivity"),
    "AmazonRDS": ("Databases", "Relational Databases"),
    "AmazonDynamoDB": ("Databases", "NoSQL Databases"),
    "AmazonElastiCache": ("Databases", "Caching"),
    "AmazonRedshift": ("Databases", "Data Warehouses"),
    "AmazonAthena": ("Analytics", "Data Processing"),
    "AWSGlue": ("Analytics", "Data Processing"),
    "AmazonKinesis": ("Analytics", "Streaming Analytics"),
    "AmazonCloudWatch": ("Management and Governance", "Observability"),
    "AWSCloudTrail": ("Management and Governance", "Compliance"),
    "AWSConfig": ("Management and Governance", "Compliance"),
    "AWSCostExplorer": ("Management and Governance", "Cost Management"),
    "AWSSupportBusiness": ("Management and Governance", "Support"),
    "AWSSupportEnterprise": ("Management and Governance", "Support"),
    "AWSSecretsManager": ("Security", "Secret Management"),
    "awskms": ("Security", "Secret Management"),
    "AmazonGuardDuty": ("Security", "Threat Detection and Response"),
    "AWSIAM": ("Identity", "Identity and Access Management"),
    "AmazonECR": ("Developer Tools", "Developer Platforms"),
    "AWSCodeCommit": ("Developer Tools", "Source Code Management"),
    "AWSCodeBuild": ("Developer Tools", "Continuous Integration and Deployment"),
    "AWSMarketplace": ("Other", "Other (Other)"),
}

AWS_REGION_NAMES: dict[str, str] = {
    "us-east-1": "US East (N. Virginia)",
    "us-east-2": "US East (Ohio)",
    "us-west-1": "US West (N. California)",
    "us-west-2": "US West (Oregon)",
    "ca-central-1": "Canada (Central)",
    "eu-west-1": "Europe (Ireland)",
    "eu-west-2": "Europe (London)",
    "eu-central-1": "Europe (Frankfurt)",
    "eu-north-1": "Europe (Stockholm)",
    "ap-northeast-1": "Asia Pacific (Tokyo)",
    "ap-southeast-1": "Asia Pacific (Singapore)",
    "ap-southeast-2": "Asia Pacific (Sydney)",
    "ap-south-1": "Asia Pacific (Mumbai)",
    "sa-east-1": "South America (Sao Paulo)",
    "global": "Global",
}

# Canonical literal for first-party AWS rows, used for ProviderName, PublisherName and
# InvoiceIssuerName alike (see docs/decisions/0004): the official validator reads a differing
# InvoiceIssuerName as a third-party charge and would demand BilledCost = 0.
AWS_PROVIDER_NAME = "AWS"
# How AWS's own FOCUS data names AWS as provider, publisher or invoice issuer (SQL LIKE patterns): all become
# AWS_PROVIDER_NAME, so the validator does not read AWS's own charges as third-party ones.
AWS_FIRST_PARTY = ("AWS", "Amazon Web Services%")
