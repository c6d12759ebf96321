"""AWS FOCUS exports (``FOCUS_1_0_AWS``, ``FOCUS_1_2_AWS``): the generic FOCUS reader plus what AWS adds.

AWS's own columns (x_ServiceCode, x_UsageType, x_Operation, x_CostCategories) are kept; ``Amazon Web Services``
spellings of provider, publisher and issuer become ``AWS`` (docs/decisions/0004); 1.0 exports get AWS's account
types; the instance type comes from EC2 usage types (``USE2-BoxUsage:p5.48xlarge``).
"""

from __future__ import annotations

from types import MappingProxyType

from gpuledger.normalize.focus_passthrough import FocusProfile, SourceColumns
from models.aws import AWS_FIRST_PARTY, AWS_PROVIDER_NAME

# Usage types of instance-hours end in the instance type; other usage types carry none.
_INSTANCE_USAGE = r"(BoxUsage|SpotUsage|DedicatedUsage|UnusedBox|UnusedDed):([a-z0-9-]+\.[a-z0-9]+)$"


def _instance_type(source: SourceColumns) -> str:
    usage_type = source.text(source.extras.get("x_UsageType"))
    return f"nullif(regexp_extract({usage_type}, '{_INSTANCE_USAGE}', 2), '')"


PROFILE = FocusProfile(
    first_party=MappingProxyType({AWS_PROVIDER_NAME: AWS_FIRST_PARTY}),
    billing_account_type="'Payer Account'",
    sub_account_type="'Linked Account'",
    instance_type=_instance_type,
)
