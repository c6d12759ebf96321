"""The billing month: the invoice month a charge belongs to, defined once for Python (here) and SQL
(``sql/normalize/billing_month.sql``, the ``billing_month()`` macro every connection has).

Billing periods start at local midnight of the 1st in the provider's billing time zone (UTC-12 to UTC+14; GCP
invoices use US/Pacific). A period start stored in UTC therefore lies within 14 hours before and 12 hours after
UTC midnight of the 1st, so 14 hours after it always falls inside the month in UTC: that shift is the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

EARLIEST_OFFSET = timedelta(hours=14)
"""How far east of UTC a billing time zone can be (UTC+14): the shift that puts any period start in its month."""

_LABEL = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")


@dataclass(frozen=True, order=True)
class BillingMonth:
    """One billing month, written ``YYYY-MM``."""

    year: int
    month: int

    @classmethod
    def parse(cls, label: str) -> BillingMonth:
        """``YYYY-MM``; raises ``ValueError`` otherwise."""
        match = _LABEL.fullmatch(label)
        if match is None:
            raise ValueError(f"{label!r} is not a billing month (YYYY-MM)")
        return cls(int(match[1]), int(match[2]))

    @classmethod
    def of_period_start(cls, period_start: datetime) -> BillingMonth:
        """The month a ``BillingPeriodStart`` (timezone-aware) belongs to."""
        shifted = period_start.astimezone(UTC) + EARLIEST_OFFSET
        return cls(shifted.year, shifted.month)

    @classmethod
    def of_day(cls, day: date) -> BillingMonth:
        return cls(day.year, day.month)

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def first_day(self) -> date:
        return date(self.year, self.month, 1)

    @property
    def last_day(self) -> date:
        return self.next().first_day - timedelta(days=1)

    @property
    def start(self) -> datetime:
        """UTC midnight of the 1st."""
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """UTC midnight of the next month's 1st (exclusive)."""
        return self.next().start

    def next(self) -> BillingMonth:
        return self.shifted(1)

    def previous(self) -> BillingMonth:
        return self.shifted(-1)

    def shifted(self, months: int) -> BillingMonth:
        """The month ``months`` later (earlier when negative)."""
        index = self.year * 12 + self.month - 1 + months
        return BillingMonth(index // 12, index % 12 + 1)

    def months_until(self, later: BillingMonth) -> int:
        """How many months ``later`` is after this one (negative when it is before)."""
        return (later.year - self.year) * 12 + later.month - self.month
