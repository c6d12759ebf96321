-- Split pieces whose sign is opposite to their charge's (a refund never becomes a cost, nor the reverse),
-- and pieces outside the categories or idle kinds (models.allocation, as alloc.* tables). Parameter: $billing_month (the month's first day).
SELECT s.charge_key, s.category, s.idle_kind, s.team, s.BilledCost, s.EffectiveCost
FROM allocation.cost_split AS s
JOIN focus.costs AS c ON c.x_DeliveryId = s.x_DeliveryId AND c.x_SourceLineItemId = s.x_SourceLineItemId
WHERE billing_month(s.BillingPeriodStart) = $billing_month
  AND (
      sign(s.BilledCost) * sign(c.BilledCost) < 0
      OR sign(s.EffectiveCost) * sign(c.EffectiveCost) < 0
      OR (sign(c.BilledCost) = 0 AND s.BilledCost <> 0)
      OR (sign(c.EffectiveCost) = 0 AND s.EffectiveCost <> 0)
      OR s.category NOT IN (SELECT category FROM alloc.categories)
      OR (s.category = 'idle') <> (s.idle_kind IS NOT NULL)
      OR s.idle_kind NOT IN (SELECT idle_kind FROM alloc.idle_kinds)
      OR (s.category = 'run' AND s.job_id IS NULL)
  )
