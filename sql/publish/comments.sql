-- Descriptions of the analyst file's tables and views (shown by DuckDB's duckdb_tables(), duckdb_columns()
-- and BI tools). Runs inside the analyst file after its tables and views exist.
COMMENT ON TABLE focus.costs IS 'FOCUS 1.2 charges of every provider: one row per charge of the newest delivery of each billing month; BilledCost is the invoice, EffectiveCost the amortized cost.';
COMMENT ON TABLE allocation.cost_split IS 'Every FOCUS charge split into run, idle, checkpoint_storage, egress and other pieces per team and job; pieces sum exactly to their charge.';
COMMENT ON TABLE showback.team_month IS 'Per billing month, team and currency: EffectiveCost by category and idle kind, GPU-hours, utilization, failed / preempted / cancelled attempts, estimated lost work, sessions, retained checkpoints and cost per completed run.';
COMMENT ON TABLE showback.team_month_reporting IS 'team_month converted to the reporting currency, with the rate, its date and source (locked when the month closed).';
COMMENT ON TABLE showback.job_costs IS 'Per job (attempt), billing month and currency: its cost by category, its outcome, estimated lost work, retained checkpoints and what its run cost to finish (frozen at completion).';
COMMENT ON TABLE showback.user_month IS 'Per billing month, team, user and currency: what each user''s jobs cost by category, their GPU-hours and interactive sessions.';
COMMENT ON TABLE showback.idle_by_hour_of_week IS 'Idle GPU-hours and idle cost per team, weekday and UTC hour.';
COMMENT ON TABLE gpu.jobs IS 'GPU jobs from the telemetry sources (Slurm, launchers, files): nodes, GPUs, times, state and run group.';
COMMENT ON TABLE meta.months IS 'Billing months and their state: open (providers may restate), closed (final, rates locked), issued (chargeback statement issued).';
COMMENT ON TABLE meta.deliveries IS 'Export deliveries loaded: source, billing period, version, files and content hash.';
COMMENT ON TABLE meta.delivery_repairs IS 'Per delivery, the descriptive values repaired (x_SourceChanges of its rows) and source rows counted once, with row counts.';
COMMENT ON TABLE meta.delivery_holds IS 'Deliveries held for review instead of published (an emptied slice, a large restatement of a closed month, usage far outside its period), and when a person accepted them.';
COMMENT ON TABLE chargeback.statements IS 'Issued chargeback statements: one row per billing month and version, with the hash of its lines; never edited.';
COMMENT ON TABLE chargeback.statement_lines IS 'The lines of each issued statement version: per team and currency, as issued.';
COMMENT ON TABLE chargeback.adjustments IS 'Restatements of issued months not charged yet: today''s total minus what was charged (the issued statement plus differences already carried) per team and currency, for the next statement.';
COMMENT ON TABLE chargeback.statement_adjustments IS 'The adjustments each issued statement version lists, as issued: corrections of its own month and differences carried from restated earlier months (charged once).';
COMMENT ON VIEW views.cost_by_team_month_category IS 'EffectiveCost per billing month, team, currency and category.';
COMMENT ON VIEW views.idle_by_team IS 'Idle cost by kind (allocated, underutilized, unallocated, unused commitment) and idle share per team and month.';
COMMENT ON VIEW views.cost_per_completed_run IS 'Cost per completed run (frozen at completion), failed / preempted / cancelled attempts, estimated lost work, retained checkpoints and sessions per team and month.';
COMMENT ON VIEW views.top_jobs IS 'Jobs ranked by cost per billing month and currency.';
COMMENT ON VIEW views.focus_by_provider_service IS 'FOCUS costs per provider, billing account, service and month.';
COMMENT ON VIEW views.statement_vs_current IS 'Issued statement totals beside today''s figures, with the adjustment a restatement brings.';

-- focus.costs: FOCUS 1.2 columns (all money in BillingCurrency, DECIMAL(38,10); periods are UTC, start inclusive, end exclusive)
COMMENT ON COLUMN focus.costs.AvailabilityZone IS 'Provider-assigned availability zone the charge was incurred in; NULL when not zone-specific.';
COMMENT ON COLUMN focus.costs.BilledCost IS 'BilledCost in BillingCurrency: what the invoice charges for this row, after discounts and without amortizing prepaid purchases (cash basis); negative for credits and refunds.';
COMMENT ON COLUMN focus.costs.BillingAccountId IS 'Provider id of the billing account the invoice is issued to (AWS payer account, Azure billing account or profile, GCP billing account).';
COMMENT ON COLUMN focus.costs.BillingAccountName IS 'Display name of the billing account, when the provider has one.';
COMMENT ON COLUMN focus.costs.BillingAccountType IS 'Provider label for the kind of billing account (e.g. Payer Account, Billing Profile, Billing Account).';
COMMENT ON COLUMN focus.costs.BillingCurrency IS 'ISO 4217 currency of every cost column of the row (BilledCost, EffectiveCost, ListCost, ContractedCost); never sum across currencies.';
COMMENT ON COLUMN focus.costs.BillingPeriodEnd IS 'Exclusive end of the billing period (invoice month) the row belongs to, as a UTC timestamp.';
COMMENT ON COLUMN focus.costs.BillingPeriodStart IS 'Inclusive start of the billing period (invoice month), a UTC timestamp at local midnight of the provider (GCP: US/Pacific); the billing month is billing_month(BillingPeriodStart), a macro of this file.';
COMMENT ON COLUMN focus.costs.CapacityReservationId IS 'Id of the capacity reservation the charge relates to; NULL when unrelated.';
COMMENT ON COLUMN focus.costs.CapacityReservationStatus IS 'Used or Unused: whether this usage consumed reserved capacity or is the unused part of the reservation; NULL without a reservation.';
COMMENT ON COLUMN focus.costs.ChargeCategory IS 'Kind of charge: Usage, Purchase, Tax, Credit or Adjustment.';
COMMENT ON COLUMN focus.costs.ChargeClass IS 'Correction when the row corrects a previously invoiced billing period, else NULL.';
COMMENT ON COLUMN focus.costs.ChargeDescription IS 'Provider''s human-readable description of the charge.';
COMMENT ON COLUMN focus.costs.ChargeFrequency IS 'How often the charge occurs: One-Time, Recurring or Usage-Based.';
COMMENT ON COLUMN focus.costs.ChargePeriodEnd IS 'Exclusive end of the period the charge covers (UTC); hourly and daily rows end on the next hour or day.';
COMMENT ON COLUMN focus.costs.ChargePeriodStart IS 'Inclusive start of the period the charge covers (UTC).';
COMMENT ON COLUMN focus.costs.CommitmentDiscountCategory IS 'Spend or Usage: whether the commitment discount commits to an amount of money or of usage; NULL without a commitment.';
COMMENT ON COLUMN focus.costs.CommitmentDiscountId IS 'Id of the commitment discount (reservation, savings plan, CUD) the row is covered by or purchases; NULL when unrelated.';
COMMENT ON COLUMN focus.costs.CommitmentDiscountName IS 'Display name of the commitment discount, when it has one.';
COMMENT ON COLUMN focus.costs.CommitmentDiscountQuantity IS 'Amount of the commitment consumed or purchased by the row, in CommitmentDiscountUnit.';
COMMENT ON COLUMN focus.costs.CommitmentDiscountStatus IS 'Used (usage covered by the commitment) or Unused (the commitment''s unused remainder, a cost with no usage); NULL without a commitment.';
COMMENT ON COLUMN focus.costs.CommitmentDiscountType IS 'Provider label for the kind of commitment (e.g. Reserved Instance, Savings Plan, Reservation).';
COMMENT ON COLUMN focus.costs.CommitmentDiscountUnit IS 'Unit of CommitmentDiscountQuantity (e.g. Hours, Units, or a currency code such as USD for spend commitments).';
COMMENT ON COLUMN focus.costs.ConsumedQuantity IS 'Amount of the resource or service used, in ConsumedUnit; NULL for non-usage rows and unused commitments.';
COMMENT ON COLUMN focus.costs.ConsumedUnit IS 'Unit of ConsumedQuantity (e.g. Hours, GB-Hours, GB).';
COMMENT ON COLUMN focus.costs.ContractedCost IS 'ContractedCost in BillingCurrency: ContractedUnitPrice x PricingQuantity, the cost at negotiated prices before commitment discounts (equals ListCost without a negotiated discount).';
COMMENT ON COLUMN focus.costs.ContractedUnitPrice IS 'Negotiated unit price per PricingUnit in BillingCurrency, before commitment discounts; NULL for taxes.';
COMMENT ON COLUMN focus.costs.EffectiveCost IS 'EffectiveCost in BillingCurrency: amortized cost after all discounts plus the share of prepaid commitments (0 on the upfront purchase), the basis of showback.';
COMMENT ON COLUMN focus.costs.InvoiceId IS 'Id of the invoice the row is billed on; NULL until an invoice (issued or provisional) exists.';
COMMENT ON COLUMN focus.costs.InvoiceIssuerName IS 'Name of the party that issues the invoice (the provider itself, or a reseller or marketplace).';
COMMENT ON COLUMN focus.costs.ListCost IS 'ListCost in BillingCurrency: ListUnitPrice x PricingQuantity, the cost at public list prices before any discount (equals BilledCost for credits).';
COMMENT ON COLUMN focus.costs.ListUnitPrice IS 'Public list price per PricingUnit in BillingCurrency; NULL for taxes.';
COMMENT ON COLUMN focus.costs.PricingCategory IS 'Pricing model of the row: Standard (on-demand), Dynamic (spot), Committed (commitment discount) or Other.';
COMMENT ON COLUMN focus.costs.PricingCurrency IS 'ISO 4217 (or virtual) currency the provider priced the row in, when it differs from BillingCurrency.';
COMMENT ON COLUMN focus.costs.PricingCurrencyContractedUnitPrice IS 'Negotiated unit price per PricingUnit in PricingCurrency.';
COMMENT ON COLUMN focus.costs.PricingCurrencyEffectiveCost IS 'EffectiveCost expressed in PricingCurrency, before conversion to BillingCurrency.';
COMMENT ON COLUMN focus.costs.PricingCurrencyListUnitPrice IS 'List unit price per PricingUnit in PricingCurrency.';
COMMENT ON COLUMN focus.costs.PricingQuantity IS 'Quantity the price applies to, in PricingUnit (e.g. instance-hours); NULL for taxes.';
COMMENT ON COLUMN focus.costs.PricingUnit IS 'Unit of PricingQuantity and of the unit prices (e.g. Hours, GB-Months).';
COMMENT ON COLUMN focus.costs.ProviderName IS 'Provider of the service: AWS, Microsoft or Google Cloud (also a Parquet partition key).';
COMMENT ON COLUMN focus.costs.PublisherName IS 'Producer of the service (the provider, or a third-party publisher for marketplace products).';
COMMENT ON COLUMN focus.costs.RegionId IS 'Provider region id the charge was incurred in (e.g. us-east-1); NULL for global services.';
COMMENT ON COLUMN focus.costs.RegionName IS 'Display name of RegionId (e.g. US East (N. Virginia)).';
COMMENT ON COLUMN focus.costs.ResourceId IS 'Provider id of the resource charged (instance, disk, bucket, ARN); GPU instances are matched to telemetry nodes by it.';
COMMENT ON COLUMN focus.costs.ResourceName IS 'Display name of the resource, when it has one.';
COMMENT ON COLUMN focus.costs.ResourceType IS 'Provider label for the kind of resource (e.g. Instance, Disk, Bucket, Virtual machine).';
COMMENT ON COLUMN focus.costs.ServiceCategory IS 'FOCUS service category (e.g. Compute, Storage, Networking, AI and Machine Learning).';
COMMENT ON COLUMN focus.costs.ServiceName IS 'Provider''s name of the service charged (e.g. Amazon Elastic Compute Cloud, Compute Engine).';
COMMENT ON COLUMN focus.costs.ServiceSubcategory IS 'FOCUS subcategory within ServiceCategory (e.g. Virtual Machines, Object Storage).';
COMMENT ON COLUMN focus.costs.SkuId IS 'Provider id of the SKU (product) the row is priced by; NULL for taxes.';
COMMENT ON COLUMN focus.costs.SkuMeter IS 'What the SKU meters, in the provider''s words (e.g. USW2-BoxUsage:p4d.24xlarge, SSD backed PD Capacity).';
COMMENT ON COLUMN focus.costs.SkuPriceDetails IS 'Properties of the SKU price as a flat JSON object (e.g. InstanceType, GpuCount; provider keys start with x_).';
COMMENT ON COLUMN focus.costs.SkuPriceId IS 'Provider id of the SKU price (price-list entry) the row was priced at.';
COMMENT ON COLUMN focus.costs.SubAccountId IS 'Provider id of the sub-account (AWS member account, Azure subscription, GCP project) the resource belongs to.';
COMMENT ON COLUMN focus.costs.SubAccountName IS 'Display name of the sub-account.';
COMMENT ON COLUMN focus.costs.SubAccountType IS 'Provider label for the kind of sub-account (e.g. Linked Account, Subscription, Project).';
COMMENT ON COLUMN focus.costs.Tags IS 'Finalized resource tags as a flat JSON object; the configured team tag key (e.g. team) assigns a charge''s owner team.';
COMMENT ON COLUMN focus.costs.x_SourceFormat IS 'gpuledger: export format the row was normalized from (aws-cur1, aws-cur2, azure-cost-details, gcp-bq, ...).';
COMMENT ON COLUMN focus.costs.x_DeliveryId IS 'gpuledger: the delivery (export version) the row belongs to, a key of meta.deliveries.delivery_id.';
COMMENT ON COLUMN focus.costs.x_SourceFile IS 'gpuledger: path of the export data file the row was read from, on the pipeline''s machine.';
COMMENT ON COLUMN focus.costs.x_SourceLineItemId IS 'gpuledger: the provider''s line-item id within the delivery; x_DeliveryId || ''/'' || x_SourceLineItemId is the charge_key of allocation.cost_split.';
COMMENT ON COLUMN focus.costs.x_SourceLineItemType IS 'gpuledger: the provider''s own charge type (e.g. AWS lineItem/LineItemType RIFee, SavingsPlanCoveredUsage).';
COMMENT ON COLUMN focus.costs.x_IngestedAt IS 'gpuledger: when this delivery was first ingested (UTC).';
COMMENT ON COLUMN focus.costs.x_ServiceCode IS 'gpuledger: the provider''s service code (AWS product code, e.g. AmazonEC2).';
COMMENT ON COLUMN focus.costs.x_UsageType IS 'gpuledger: the provider''s usage type (AWS lineItem/UsageType or equivalent); egress charges are recognized by it.';
COMMENT ON COLUMN focus.costs.x_Operation IS 'gpuledger: the provider''s operation (AWS lineItem/Operation, e.g. RunInstances).';
COMMENT ON COLUMN focus.costs.x_InstanceType IS 'gpuledger: instance or VM type (e.g. p5.48xlarge), the key of the GPU catalog that tells GPU charges apart.';
COMMENT ON COLUMN focus.costs.x_CostCategories IS 'gpuledger: the provider''s cost categories (AWS Cost Categories) as a flat JSON object.';
COMMENT ON COLUMN focus.costs.x_AmortizationClass IS 'gpuledger, Azure only: Principal (commitment purchase) or Amortized Charge.';
COMMENT ON COLUMN focus.costs.x_InvoiceMonth IS 'gpuledger, GCP only: invoice.month (YYYYMM, US/Pacific) the row is billed in.';
COMMENT ON COLUMN focus.costs.x_SourceVersion IS 'gpuledger: schema version of the source export (e.g. FOCUS 1.0, MCA cost details); NULL when the format has none.';
COMMENT ON COLUMN focus.costs.x_PricingUnitDescription IS 'gpuledger: the pricing unit as the source spells it (Hrs, 10K, gibibyte hour); PricingUnit is its FOCUS UnitFormat name.';
COMMENT ON COLUMN focus.costs.x_SourceChanges IS 'gpuledger: comma-separated repairs of this row''s descriptive values (InvalidTags, MissingContractedCost, UnmappedUnit, ...); NULL when the source''s values were taken as they are. Money is never repaired.';
COMMENT ON COLUMN focus.costs.x_SourceValues IS 'gpuledger: the repaired values as the source wrote them, a JSON object keyed by column; NULL without repairs.';

-- allocation.cost_split: one row per piece of a FOCUS charge; BilledCost and EffectiveCost of a charge's pieces sum exactly to the charge's
COMMENT ON COLUMN allocation.cost_split.BillingPeriodStart IS 'BillingPeriodStart of the charge (UTC), which fixes its billing month.';
COMMENT ON COLUMN allocation.cost_split.BillingCurrency IS 'ISO 4217 currency of the piece''s BilledCost and EffectiveCost, the charge''s BillingCurrency.';
COMMENT ON COLUMN allocation.cost_split.ProviderName IS 'ProviderName of the charge (AWS, Microsoft, Google Cloud).';
COMMENT ON COLUMN allocation.cost_split.BillingAccountId IS 'BillingAccountId of the charge.';
COMMENT ON COLUMN allocation.cost_split.SubAccountId IS 'SubAccountId of the charge; its configured account team owns pieces no tag or job claims.';
COMMENT ON COLUMN allocation.cost_split.charge_key IS 'The FOCUS charge split: x_DeliveryId || ''/'' || x_SourceLineItemId of its focus.costs row.';
COMMENT ON COLUMN allocation.cost_split.x_DeliveryId IS 'x_DeliveryId of the charge (its delivery in meta.deliveries).';
COMMENT ON COLUMN allocation.cost_split.x_SourceLineItemId IS 'x_SourceLineItemId of the charge.';
COMMENT ON COLUMN allocation.cost_split.ChargeCategory IS 'ChargeCategory of the charge (Usage, Purchase, Tax, Credit, Adjustment).';
COMMENT ON COLUMN allocation.cost_split.ChargePeriodStart IS 'ChargePeriodStart of the charge (UTC, inclusive).';
COMMENT ON COLUMN allocation.cost_split.ChargePeriodEnd IS 'ChargePeriodEnd of the charge (UTC, exclusive).';
COMMENT ON COLUMN allocation.cost_split.ServiceName IS 'ServiceName of the charge.';
COMMENT ON COLUMN allocation.cost_split.ResourceId IS 'ResourceId of the charge (the GPU instance, bucket or disk the piece comes from).';
COMMENT ON COLUMN allocation.cost_split.category IS 'What the piece paid for: run (held GPU time x measured activity), idle (the rest of the GPU time, and unused commitments), checkpoint_storage, egress or other.';
COMMENT ON COLUMN allocation.cost_split.idle_kind IS 'For idle pieces: allocated (held by a job, inactive), underutilized (active but below saturation: held time x (1 - activity) while active), unallocated (held by no job) or unused_commitment (a reservation / savings plan / commitment paid and not used); NULL otherwise.';
COMMENT ON COLUMN allocation.cost_split.team IS 'Team the piece is charged to: the job''s team for job pieces, else the charge''s owner (team tag, then sub-account), else unallocated.';
COMMENT ON COLUMN allocation.cost_split.cluster IS 'Cluster of the job the piece belongs to; NULL for pieces not tied to a job.';
COMMENT ON COLUMN allocation.cost_split.job_id IS 'Scheduler job id (within cluster) the piece belongs to; NULL for pieces not tied to a job.';
COMMENT ON COLUMN allocation.cost_split.BilledCost IS 'The piece''s share of the charge''s BilledCost in BillingCurrency (invoice basis); same sign as the charge.';
COMMENT ON COLUMN allocation.cost_split.EffectiveCost IS 'The piece''s share of the charge''s EffectiveCost in BillingCurrency (amortized), the basis of showback; same sign as the charge.';
COMMENT ON COLUMN allocation.cost_split.gpu_hours IS 'GPU-hours the piece stands for (run: held x activity, idle underutilized: active below saturation, idle allocated: held but inactive, idle unallocated: held by no job); 0 for non-GPU pieces, unused commitments, credits, negations and corrections.';
COMMENT ON COLUMN allocation.cost_split.allocated_ratio IS 'The piece''s share of its charge, 0 to 1: its weight (GPU-seconds, bytes) over the charge''s total weight.';
COMMENT ON COLUMN allocation.cost_split.allocation_basis IS 'What the share was weighed by: GPU-seconds attributed by job-label (the job''s own samples), gpu-index (samples of the GPUs it held), node-shared (node-level samples shared between jobs: ambiguous), allocation-only (no samples: priced as fully used); stored-byte-hours, egress-bytes, gpu-seconds-fallback, shared-gpu-hours; owner-tag / owner-account / unallocated for whole charges.';
COMMENT ON COLUMN allocation.cost_split.metric IS 'Metric that priced the activity of run and idle job pieces (DCGM_FI_PROF_SM_ACTIVE preferred, else DCGM_FI_PROF_GR_ENGINE_ACTIVE, else DCGM_FI_DEV_GPU_UTIL; allocation-only without samples); NULL otherwise.';
COMMENT ON COLUMN allocation.cost_split.AllocatedMethodId IS 'Id of the split method that produced the piece (FOCUS 1.3 naming), e.g. gpuledger-split-v2.';
COMMENT ON COLUMN allocation.cost_split.AllocatedMethodDetails IS 'How the piece was computed (FOCUS 1.3 naming), JSON: ratio (its share of the charge), usage_unit (GPU-seconds, byte-hours, bytes; null for whole charges) and usage_quantity (the usage it was weighed by).';
COMMENT ON COLUMN allocation.cost_split.AllocatedResourceId IS 'The job the piece is allocated to (FOCUS 1.3 naming, equal to job_id); NULL on the unallocated remainder and owner pieces.';

-- showback.team_month: per billing month, team and source currency; costs are EffectiveCost in currency unless named billed
COMMENT ON COLUMN showback.team_month.billing_month IS 'First day of the billing month (DATE).';
COMMENT ON COLUMN showback.team_month.team IS 'Team the costs are charged to (unallocated: no tag, account or job claimed them).';
COMMENT ON COLUMN showback.team_month.currency IS 'ISO 4217 BillingCurrency of every cost column of the row; never add rows of different currencies.';
COMMENT ON COLUMN showback.team_month.run_cost IS 'EffectiveCost of the GPU time the team''s jobs held, weighted by measured activity (pricing = activity) or above the idle threshold (pricing = active-time), in currency.';
COMMENT ON COLUMN showback.team_month.idle_cost IS 'EffectiveCost of idle GPU time and unused commitments charged to the team, in currency: idle_allocated_cost + idle_underutilized_cost + idle_unallocated_cost + idle_unused_commitment_cost.';
COMMENT ON COLUMN showback.team_month.idle_allocated_cost IS 'EffectiveCost of GPU time the team''s jobs held while inactive (at or below the idle threshold), in currency.';
COMMENT ON COLUMN showback.team_month.idle_underutilized_cost IS 'EffectiveCost of GPU time the team''s jobs were active but below saturation (held time x (1 - activity) while active), in currency.';
COMMENT ON COLUMN showback.team_month.idle_unused_commitment_cost IS 'EffectiveCost of reservations, savings plans and committed use the team owns but did not use, in currency.';
COMMENT ON COLUMN showback.team_month.idle_unallocated_cost IS 'EffectiveCost of GPU capacity no job held, charged to the instance''s owner team (or shared by GPU-hours under idle_policy share), in currency.';
COMMENT ON COLUMN showback.team_month.checkpoint_storage_cost IS 'EffectiveCost of checkpoint storage, split by stored bytes per job, in currency.';
COMMENT ON COLUMN showback.team_month.egress_cost IS 'EffectiveCost of data transfer out (internet, cross-region, cross-zone), split by bytes per job, in currency.';
COMMENT ON COLUMN showback.team_month.other_cost IS 'EffectiveCost of every other charge the team owns (non-GPU compute, storage, taxes, support), in currency.';
COMMENT ON COLUMN showback.team_month.total_cost IS 'Total EffectiveCost in currency: run + idle + checkpoint_storage + egress + other; sums to the month''s FOCUS EffectiveCost per currency.';
COMMENT ON COLUMN showback.team_month.billed_cost IS 'Total BilledCost (invoice basis, purchases not amortized) in currency; sums to the month''s FOCUS BilledCost per currency.';
COMMENT ON COLUMN showback.team_month.gpu_hours IS 'GPU-hours charged to the team in this currency: run plus idle (allocated, underutilized and unallocated).';
COMMENT ON COLUMN showback.team_month.active_gpu_hours IS 'GPU-hours priced as run: held GPU-hours x measured activity (or the active time under pricing = active-time).';
COMMENT ON COLUMN showback.team_month.mean_gpu_utilization IS 'Allocated-time-weighted mean GPU utilization (0 to 1) of the team''s jobs in the month over all clusters, the same on each currency row; NULL without samples.';
COMMENT ON COLUMN showback.team_month.failed_run_cost IS 'EffectiveCost, charged while they ran, of the team''s attempts that failed (FAILED, OUT_OF_MEMORY, NODE_FAIL, TIMEOUT), in currency; sessions excluded.';
COMMENT ON COLUMN showback.team_month.preempted_run_cost IS 'EffectiveCost, charged while they ran, of attempts the scheduler or a spot interruption preempted, in currency.';
COMMENT ON COLUMN showback.team_month.cancelled_run_cost IS 'EffectiveCost, charged while they ran, of attempts a person cancelled, in currency.';
COMMENT ON COLUMN showback.team_month.estimated_lost_work_cost IS 'ESTIMATE: GPU cost of failed, preempted and cancelled attempts after their last checkpoint (attempt GPU cost x share of its time after the newest object it wrote under its checkpoint_uri; all of it without one), in currency.';
COMMENT ON COLUMN showback.team_month.retained_checkpoint_cost IS 'EffectiveCost charged to the team''s runs after their final attempt ended (checkpoints kept): visible, never part of a cost to finish, in currency.';
COMMENT ON COLUMN showback.team_month.session_cost IS 'EffectiveCost of interactive sessions (notebooks, shells: [runs] partition / QOS / name patterns), which are never runs, in currency.';
COMMENT ON COLUMN showback.team_month.sessions IS 'Interactive sessions with costs in the month.';
COMMENT ON COLUMN showback.team_month.node_shared_gpu_cost IS 'Data quality: EffectiveCost of the team''s GPU pieces priced by node-level activity shared between jobs (no job label or GPU index said which GPU was whose), in currency.';
COMMENT ON COLUMN showback.team_month.completed_runs IS 'Runs (run groups, not sessions) whose final attempt completed in this calendar month (UTC).';
COMMENT ON COLUMN showback.team_month.cost_per_completed_run IS 'Cost to finish of those runs (all attempts, all months, charged before completion: frozen then; EffectiveCost in currency) divided by completed_runs; NULL when none completed.';

-- showback.team_month_reporting: team_month in the reporting currency; amount_reporting = amount x exchange_rate
COMMENT ON COLUMN showback.team_month_reporting.billing_month IS 'First day of the billing month (DATE).';
COMMENT ON COLUMN showback.team_month_reporting.team IS 'Team, as in showback.team_month.';
COMMENT ON COLUMN showback.team_month_reporting.currency IS 'Source currency (ISO 4217) of the team_month row converted.';
COMMENT ON COLUMN showback.team_month_reporting.reporting_currency IS 'The configured reporting currency (ISO 4217) of every *_reporting column.';
COMMENT ON COLUMN showback.team_month_reporting.exchange_rate IS 'Units of reporting_currency per unit of currency: the rate locked when the month closed, else the newest dated on or before month end; 1 for the reporting currency itself.';
COMMENT ON COLUMN showback.team_month_reporting.rate_date IS 'Date of the exchange rate used; NULL when currency is the reporting currency.';
COMMENT ON COLUMN showback.team_month_reporting.rate_source IS 'Rate file (or locked source) the exchange rate came from; NULL when currency is the reporting currency.';
COMMENT ON COLUMN showback.team_month_reporting.total_cost IS 'team_month.total_cost in the source currency (EffectiveCost), before conversion.';
COMMENT ON COLUMN showback.team_month_reporting.run_cost_reporting IS 'run_cost x exchange_rate in reporting_currency, rounded to 10 decimals.';
COMMENT ON COLUMN showback.team_month_reporting.idle_cost_reporting IS 'idle_cost (every idle kind) x exchange_rate in reporting_currency, rounded to 10 decimals.';
COMMENT ON COLUMN showback.team_month_reporting.checkpoint_storage_cost_reporting IS 'checkpoint_storage_cost x exchange_rate in reporting_currency, rounded to 10 decimals.';
COMMENT ON COLUMN showback.team_month_reporting.egress_cost_reporting IS 'egress_cost x exchange_rate in reporting_currency, rounded to 10 decimals.';
COMMENT ON COLUMN showback.team_month_reporting.other_cost_reporting IS 'other_cost x exchange_rate in reporting_currency, rounded to 10 decimals.';
COMMENT ON COLUMN showback.team_month_reporting.total_cost_reporting IS 'total_cost x exchange_rate in reporting_currency, rounded to 10 decimals; the only column safe to add across source currencies.';

-- showback.job_costs: per job, billing month and source currency; costs are EffectiveCost in currency
COMMENT ON COLUMN showback.job_costs.billing_month IS 'First day of the billing month the job''s costs were billed in (DATE); a job spanning months has a row per month.';
COMMENT ON COLUMN showback.job_costs.currency IS 'ISO 4217 BillingCurrency of the job''s cost columns.';
COMMENT ON COLUMN showback.job_costs.team IS 'Team of the job: its scheduler account mapped by the configuration, else the account itself.';
COMMENT ON COLUMN showback.job_costs.cluster IS 'Cluster the job ran on; (cluster, job_id) identifies a job.';
COMMENT ON COLUMN showback.job_costs.job_id IS 'Scheduler job id, unique within cluster (an earlier attempt of a requeued Slurm job: <JobID>#<n>).';
COMMENT ON COLUMN showback.job_costs.name IS 'Job name as submitted (informational).';
COMMENT ON COLUMN showback.job_costs.project IS 'Project the scheduler or launcher recorded for the job.';
COMMENT ON COLUMN showback.job_costs.user IS 'User who submitted the job.';
COMMENT ON COLUMN showback.job_costs.run_group IS 'Run the job is an attempt of, as the scheduler says (comment, label, wckey, array, run_group column), else its requeue chain (JobID); the job name only when [runs] group_by_name.';
COMMENT ON COLUMN showback.job_costs.outcome IS 'What the attempt''s state means: completed, failed (FAILED, OUT_OF_MEMORY, NODE_FAIL, TIMEOUT), preempted, cancelled, running or unknown.';
COMMENT ON COLUMN showback.job_costs.session IS 'True for an interactive session (a [runs] partition, QOS or name pattern): never a run, its cost shown as session_cost.';
COMMENT ON COLUMN showback.job_costs.attempt_cost IS 'EffectiveCost charged while the attempt ran (charge period starting before its end), in currency.';
COMMENT ON COLUMN showback.job_costs.retained_checkpoint_cost IS 'EffectiveCost charged to the job after its run''s final attempt ended (retained checkpoints), in currency.';
COMMENT ON COLUMN showback.job_costs.last_checkpoint IS 'Write time (UTC) of the newest checkpoint object the attempt wrote under its checkpoint_uri, for failed, preempted and cancelled attempts; NULL when none.';
COMMENT ON COLUMN showback.job_costs.estimated_lost_work_cost IS 'ESTIMATE for failed, preempted and cancelled attempts: attempt GPU cost x share of its time after last_checkpoint (all of it without one), in currency; NULL otherwise.';
COMMENT ON COLUMN showback.job_costs.estimated_lost_gpu_hours IS 'ESTIMATE: GPU-hours held after last_checkpoint (all the attempt''s without one); NULL for completed, running and session jobs.';
COMMENT ON COLUMN showback.job_costs.state IS 'Final (or current) scheduler state: COMPLETED, FAILED, OUT_OF_MEMORY, TIMEOUT, CANCELLED, NODE_FAIL, PREEMPTED, UNKNOWN or RUNNING.';
COMMENT ON COLUMN showback.job_costs.start_time IS 'When the job started (UTC).';
COMMENT ON COLUMN showback.job_costs.end_time IS 'When the job ended (UTC); NULL while running.';
COMMENT ON COLUMN showback.job_costs.gpu_count IS 'GPUs the job held over all its nodes.';
COMMENT ON COLUMN showback.job_costs.gpu_model IS 'GPU model when the scheduler reports it (e.g. H100), else NULL.';
COMMENT ON COLUMN showback.job_costs.run_cost IS 'EffectiveCost of the GPU time the job held, weighted by its measured activity, in currency.';
COMMENT ON COLUMN showback.job_costs.idle_cost IS 'EffectiveCost of GPU time the job held but did not use (allocated and underutilized idle), in currency.';
COMMENT ON COLUMN showback.job_costs.checkpoint_storage_cost IS 'EffectiveCost of storing the job''s checkpoints, in currency.';
COMMENT ON COLUMN showback.job_costs.egress_cost IS 'EffectiveCost of the job''s data transfer out, in currency.';
COMMENT ON COLUMN showback.job_costs.total_cost IS 'Total EffectiveCost of the job in the month, in currency: run + idle + checkpoint_storage + egress.';
COMMENT ON COLUMN showback.job_costs.billed_cost IS 'Total BilledCost of the job''s pieces (invoice basis), in currency.';
COMMENT ON COLUMN showback.job_costs.gpu_hours IS 'GPU-hours the job held in the month (run plus allocated and underutilized idle).';
COMMENT ON COLUMN showback.job_costs.active_gpu_hours IS 'GPU-hours priced as run: held GPU-hours x measured activity.';
COMMENT ON COLUMN showback.job_costs.failed IS 'True when the attempt failed (outcome failed); preempted and cancelled attempts are not failures.';
COMMENT ON COLUMN showback.job_costs.run_group_attempts IS 'Number of jobs (attempts) in the job''s run group.';
COMMENT ON COLUMN showback.job_costs.run_group_completed IS 'True when the run group''s final attempt (the last to start) completed and it is not a session.';
COMMENT ON COLUMN showback.job_costs.run_group_completed_at IS 'End time (UTC) of the run group''s final attempt when it completed, else NULL.';
COMMENT ON COLUMN showback.job_costs.run_group_cost IS 'EffectiveCost of all attempts of the run group over all billing months, in currency.';
COMMENT ON COLUMN showback.job_costs.run_group_cost_to_finish IS 'What the finished run really cost: every attempt''s cost charged before it completed, over all months (frozen at completion), in currency; NULL unless completed.';

-- showback.idle_by_hour_of_week: idle pieces spread evenly over the hours of their charge
COMMENT ON COLUMN showback.idle_by_hour_of_week.billing_month IS 'First day of the billing month (DATE).';
COMMENT ON COLUMN showback.idle_by_hour_of_week.team IS 'Team the idle GPU time is charged to.';
COMMENT ON COLUMN showback.idle_by_hour_of_week.currency IS 'ISO 4217 currency of idle_cost.';
COMMENT ON COLUMN showback.idle_by_hour_of_week.iso_weekday IS 'ISO weekday of the UTC hour: 1 = Monday to 7 = Sunday.';
COMMENT ON COLUMN showback.idle_by_hour_of_week.weekday IS 'English name of the weekday (Monday to Sunday), UTC.';
COMMENT ON COLUMN showback.idle_by_hour_of_week.hour_of_day IS 'Hour of the day in UTC, 0 to 23.';
COMMENT ON COLUMN showback.idle_by_hour_of_week.idle_gpu_hours IS 'Idle GPU-hours (allocated and unallocated) in that weekday and hour over the month.';
COMMENT ON COLUMN showback.idle_by_hour_of_week.idle_allocated_gpu_hours IS 'Of idle_gpu_hours, those held by the team''s jobs but unused; NULL when none.';
COMMENT ON COLUMN showback.idle_by_hour_of_week.idle_cost IS 'Idle EffectiveCost in currency apportioned to that weekday and hour; rounded per piece, so totals may differ from team_month.idle_cost in the last decimals.';

-- gpu.jobs: GPU jobs from the telemetry sources
COMMENT ON COLUMN gpu.jobs.job_id IS 'Scheduler job id, unique within cluster (Slurm array tasks as 1234_7).';
COMMENT ON COLUMN gpu.jobs.cluster IS 'Cluster the job ran on.';
COMMENT ON COLUMN gpu.jobs.name IS 'Job name as submitted (Slurm JobName, pod name); informational.';
COMMENT ON COLUMN gpu.jobs.account IS 'Owner as the scheduler knows it (Slurm account, Kubernetes namespace); the configuration maps it to a team, else it is the team.';
COMMENT ON COLUMN gpu.jobs.project IS 'Project recorded for the job, when the source has one.';
COMMENT ON COLUMN gpu.jobs.user IS 'User who submitted the job.';
COMMENT ON COLUMN gpu.jobs.nodes IS 'Nodes the job ran on, expanded (gpu-[01-02] becomes [gpu-01, gpu-02]).';
COMMENT ON COLUMN gpu.jobs.gpu_model IS 'GPU model when the scheduler reports it (e.g. H100), else NULL.';
COMMENT ON COLUMN gpu.jobs.gpu_count IS 'GPUs held over all nodes (Slurm AllocTRES gres/gpu), spread evenly over nodes.';
COMMENT ON COLUMN gpu.jobs.start_time IS 'When the job started (UTC).';
COMMENT ON COLUMN gpu.jobs.end_time IS 'When the job ended (UTC); NULL while running.';
COMMENT ON COLUMN gpu.jobs.state IS 'Scheduler state: COMPLETED, FAILED, OUT_OF_MEMORY, TIMEOUT, CANCELLED, NODE_FAIL, PREEMPTED, UNKNOWN (ended, outcome not reported) or RUNNING.';
COMMENT ON COLUMN gpu.jobs.run_group IS 'Training run the job is an attempt of: restarts after OOM, preemption or node failure share it.';
COMMENT ON COLUMN gpu.jobs.checkpoint_uri IS 'Where the job writes checkpoints (e.g. s3://bucket/prefix/), when known; checkpoint storage is charged to it.';
COMMENT ON COLUMN gpu.jobs.source IS 'Configured telemetry source that reported the job.';

-- meta.months: the billing month lifecycle
COMMENT ON COLUMN meta.months.billing_month IS 'First day of the billing month (DATE).';
COMMENT ON COLUMN meta.months.state IS 'open (providers may still restate), closed (final, exchange rates locked) or issued (a chargeback statement was issued).';
COMMENT ON COLUMN meta.months.closes_on IS 'First day the month is final for every provider charging in it (the month''s end plus the longest finalization window).';
COMMENT ON COLUMN meta.months.closed_at IS 'When the month was closed and its rates locked (UTC); NULL while open.';
COMMENT ON COLUMN meta.months.issued_at IS 'When its first chargeback statement was issued (UTC); NULL until issued.';

-- meta.deliveries: export deliveries loaded (published without the volatile ingested_at)
COMMENT ON COLUMN meta.deliveries.delivery_id IS 'Id of the delivery (format:account:period:version), the x_DeliveryId of its FOCUS rows.';
COMMENT ON COLUMN meta.deliveries.source_name IS 'Configured source the delivery came from.';
COMMENT ON COLUMN meta.deliveries.source_format IS 'Export format (aws-cur1, aws-cur2, azure-cost-details, gcp-bq, ...).';
COMMENT ON COLUMN meta.deliveries.billing_account_id IS 'Billing account the delivery covers, when its manifest names one.';
COMMENT ON COLUMN meta.deliveries.billing_period IS 'Billing month the delivery covers (YYYY-MM).';
COMMENT ON COLUMN meta.deliveries.version IS 'Provider''s version of the export (assembly or run id, export time); a newer one replaces the month''s rows.';
COMMENT ON COLUMN meta.deliveries.manifest IS 'Path of the delivery''s manifest on the pipeline''s machine; NULL when it had none.';
COMMENT ON COLUMN meta.deliveries.files IS 'Paths of the delivery''s data files on the pipeline''s machine.';
COMMENT ON COLUMN meta.deliveries.bytes IS 'Total size of the data files in bytes.';
COMMENT ON COLUMN meta.deliveries.content_sha256 IS 'SHA-256 of the data files'' content: an unchanged re-delivery has the same hash.';
COMMENT ON COLUMN meta.deliveries.focus_rows IS 'FOCUS rows the delivery produced.';
COMMENT ON COLUMN meta.deliveries.first_ingested_at IS 'When the delivery was first ingested (UTC).';
COMMENT ON COLUMN meta.deliveries.state IS 'published (it owned its slices), held (checked, waiting for gpuledger accept) or superseded (held, then overtaken by a newer delivery).';
COMMENT ON COLUMN meta.deliveries.version_time IS 'When the provider made this version (Azure submittedTime, GCP export_time, the AWS manifest''s time): an older version never replaces a newer one.';
COMMENT ON COLUMN meta.deliveries.origin IS 'Bucket the manifest says the files were delivered to (s3://...); a slice keeps one.';

-- meta.delivery_repairs
COMMENT ON COLUMN meta.delivery_repairs.delivery_id IS 'The delivery (meta.deliveries.delivery_id).';
COMMENT ON COLUMN meta.delivery_repairs.change IS 'A repair named in x_SourceChanges, or RepeatedExtractRecord: GCP records an earlier extract of the month had delivered, counted once.';
COMMENT ON COLUMN meta.delivery_repairs.rows IS 'Rows of the delivery with that repair (source records, for RepeatedExtractRecord).';

-- meta.delivery_holds
COMMENT ON COLUMN meta.delivery_holds.delivery_id IS 'The held delivery (meta.deliveries.delivery_id).';
COMMENT ON COLUMN meta.delivery_holds.reason IS 'The hold rule: empty_slice, closed_month_change or usage_outside_period.';
COMMENT ON COLUMN meta.delivery_holds.provider_name IS 'ProviderName of the slice held.';
COMMENT ON COLUMN meta.delivery_holds.billing_account_id IS 'BillingAccountId of the slice held.';
COMMENT ON COLUMN meta.delivery_holds.billing_period IS 'Billing month of the slice held (YYYY-MM).';
COMMENT ON COLUMN meta.delivery_holds.detail IS 'What the delivery would change, in words and figures.';
COMMENT ON COLUMN meta.delivery_holds.held_at IS 'When the delivery was held (UTC).';
COMMENT ON COLUMN meta.delivery_holds.accepted_at IS 'When a person accepted it with gpuledger accept (UTC); NULL while it waits.';

-- chargeback.statements: issued statements, never edited
COMMENT ON COLUMN chargeback.statements.billing_month IS 'First day of the billing month the statement is for (DATE).';
COMMENT ON COLUMN chargeback.statements.version IS 'Statement version, 1 for the first issue; a reissue with changed figures adds the next.';
COMMENT ON COLUMN chargeback.statements.issued_at IS 'When this version was issued (UTC).';
COMMENT ON COLUMN chargeback.statements.content_sha256 IS 'SHA-256 of the version''s data (its canonical JSON), proof it was never edited.';
COMMENT ON COLUMN chargeback.statements.teams IS 'Number of teams with lines in this version.';
COMMENT ON COLUMN chargeback.statements.data IS 'The whole statement as issued (canonical JSON, amounts as decimal strings): what gpuledger report renders; NULL for versions issued before it was stored.';

-- chargeback.statement_lines: the figures as issued, per team and currency (costs are EffectiveCost in currency)
COMMENT ON COLUMN chargeback.statement_lines.billing_month IS 'First day of the billing month (DATE).';
COMMENT ON COLUMN chargeback.statement_lines.version IS 'Statement version the line belongs to (chargeback.statements.version).';
COMMENT ON COLUMN chargeback.statement_lines.team IS 'Team charged.';
COMMENT ON COLUMN chargeback.statement_lines.currency IS 'ISO 4217 source currency of the line''s cost columns.';
COMMENT ON COLUMN chargeback.statement_lines.run_cost IS 'Run cost as issued (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.statement_lines.idle_allocated_cost IS 'Idle cost of GPU time the team''s jobs held but did not use, as issued (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.statement_lines.idle_unallocated_cost IS 'Idle cost of GPU capacity no job held, as issued (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.statement_lines.checkpoint_storage_cost IS 'Checkpoint storage cost as issued (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.statement_lines.egress_cost IS 'Egress cost as issued (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.statement_lines.other_cost IS 'Other cost as issued (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.statement_lines.total_cost IS 'Total charged as issued (EffectiveCost in currency), the sum of the six categories.';
COMMENT ON COLUMN chargeback.statement_lines.billed_cost IS 'Total BilledCost as issued (invoice basis, in currency), for reference.';
COMMENT ON COLUMN chargeback.statement_lines.gpu_hours IS 'GPU-hours charged as issued.';
COMMENT ON COLUMN chargeback.statement_lines.failed_run_cost IS 'Failed-run waste as issued (EffectiveCost in currency), included in the total.';
COMMENT ON COLUMN chargeback.statement_lines.completed_runs IS 'Runs completed in the month as issued.';
COMMENT ON COLUMN chargeback.statement_lines.reporting_currency IS 'Reporting currency of total_cost_reporting; NULL without one configured.';
COMMENT ON COLUMN chargeback.statement_lines.exchange_rate IS 'Units of reporting_currency per unit of currency at issue: the rate locked when the month closed, 1 for the reporting currency itself.';
COMMENT ON COLUMN chargeback.statement_lines.total_cost_reporting IS 'total_cost x exchange_rate in reporting_currency as issued.';

-- chargeback.adjustments: restatements of issued months, carried by a later statement
COMMENT ON COLUMN chargeback.adjustments.billing_month IS 'First day of the issued billing month that was restated (DATE).';
COMMENT ON COLUMN chargeback.adjustments.statement_version IS 'Latest issued statement version the adjustment is measured against.';
COMMENT ON COLUMN chargeback.adjustments.team IS 'Team whose figures changed.';
COMMENT ON COLUMN chargeback.adjustments.currency IS 'ISO 4217 source currency of the amounts.';
COMMENT ON COLUMN chargeback.adjustments.issued_total IS 'What was charged for the month so far: total_cost on the latest issued statement plus the differences later statements carried (EffectiveCost in currency; 0 when the team had no line).';
COMMENT ON COLUMN chargeback.adjustments.restated_total IS 'Today''s showback total_cost for the month (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.adjustments.adjustment IS 'restated_total - issued_total in currency: positive means the team owes more, negative a refund.';
COMMENT ON COLUMN chargeback.adjustments.applies_to_month IS 'First day of the month whose statement carries the adjustment: the next one not yet issued (or the month after the last known one).';
COMMENT ON COLUMN chargeback.adjustments.detected_at IS 'When this difference was first seen (UTC).';

-- chargeback.statement_adjustments: what each issued statement version lists
COMMENT ON COLUMN chargeback.statement_adjustments.billing_month IS 'First day of the billing month of the statement that lists the adjustment (DATE).';
COMMENT ON COLUMN chargeback.statement_adjustments.version IS 'Version of that statement.';
COMMENT ON COLUMN chargeback.statement_adjustments.kind IS 'correction: what this version changes against the month''s previous version; carried: a restated earlier month''s difference charged on this statement.';
COMMENT ON COLUMN chargeback.statement_adjustments.restated_month IS 'First day of the restated month (the statement''s own month for a correction).';
COMMENT ON COLUMN chargeback.statement_adjustments.statement_version IS 'Version of the restated month''s statement the difference is measured against.';
COMMENT ON COLUMN chargeback.statement_adjustments.team IS 'Team whose figures changed.';
COMMENT ON COLUMN chargeback.statement_adjustments.currency IS 'ISO 4217 source currency of the amounts.';
COMMENT ON COLUMN chargeback.statement_adjustments.issued_total IS 'What was charged for the restated month before (EffectiveCost in currency).';
COMMENT ON COLUMN chargeback.statement_adjustments.restated_total IS 'The restated month''s showback total_cost when this version was issued.';
COMMENT ON COLUMN chargeback.statement_adjustments.adjustment IS 'restated_total - issued_total in currency: positive means the team owes more, negative a refund.';
COMMENT ON COLUMN chargeback.statement_adjustments.exchange_rate IS 'The restated month''s locked rate to the reporting currency; NULL without one.';
COMMENT ON COLUMN chargeback.statement_adjustments.adjustment_reporting IS 'adjustment x exchange_rate in the reporting currency.';

-- showback.user_month: per billing month, team, user and source currency; costs are EffectiveCost in currency
COMMENT ON COLUMN showback.user_month.billing_month IS 'First day of the billing month (DATE).';
COMMENT ON COLUMN showback.user_month.team IS 'Team of the user''s jobs.';
COMMENT ON COLUMN showback.user_month.user IS 'User who submitted the jobs (unknown when the scheduler did not say).';
COMMENT ON COLUMN showback.user_month.currency IS 'ISO 4217 currency of every cost column of the row.';
COMMENT ON COLUMN showback.user_month.run_cost IS 'EffectiveCost of the GPU time the user''s jobs held, weighted by measured activity, in currency.';
COMMENT ON COLUMN showback.user_month.idle_cost IS 'EffectiveCost of GPU time the user''s jobs held but did not use (allocated and underutilized), in currency.';
COMMENT ON COLUMN showback.user_month.checkpoint_storage_cost IS 'EffectiveCost of storing the user''s jobs'' checkpoints, in currency.';
COMMENT ON COLUMN showback.user_month.egress_cost IS 'EffectiveCost of the user''s jobs'' data transfer out, in currency.';
COMMENT ON COLUMN showback.user_month.total_cost IS 'EffectiveCost of the user''s jobs in the month, in currency (costs of no job stay in team_month only).';
COMMENT ON COLUMN showback.user_month.billed_cost IS 'BilledCost of the user''s jobs'' pieces (invoice basis), in currency.';
COMMENT ON COLUMN showback.user_month.session_cost IS 'EffectiveCost of the user''s interactive sessions, in currency.';
COMMENT ON COLUMN showback.user_month.jobs IS 'Jobs (attempts and sessions) with costs in the month.';
COMMENT ON COLUMN showback.user_month.gpu_hours IS 'GPU-hours the user''s jobs held.';
COMMENT ON COLUMN showback.user_month.active_gpu_hours IS 'GPU-hours priced as run: held x measured activity.';
