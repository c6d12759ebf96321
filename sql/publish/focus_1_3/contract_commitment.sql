-- FOCUS 1.3 ContractCommitment: one row per commitment the charges name (an AWS Reserved Instance or Savings Plan,
-- an Azure reservation or savings plan, a GCP committed use discount), from the charges that pay for or consume it
-- (their ContractApplied, cost_and_usage.sql, put in front as the CTE cost_and_usage by
-- gpuledger/publish/focus_1_3.py). No parameters.
--
-- Term: as the source states it (x_CommitmentTermStart/End); GCP's billing export states only the term's length in
-- the commitment SKU ("... for 1 Year"), so the start is the first fee hour in the warehouse; a commitment whose
-- source says nothing spans the charges seen. Cost: its one-time purchases, plus, for recurring fees, the fee per
-- hour seen times the hours of the term. Both say how they were found (x_TermBasis, x_CostBasis).
WITH charges AS (
    SELECT * FROM cost_and_usage WHERE ContractApplied IS NOT NULL
),

roles AS (
    -- what each charge is to its commitment: paying for it (a purchase, or GCP's fee billed as recurring usage),
    -- consuming it (used), or its unused part
    SELECT
        *,
        ContractApplied ->> '$.Elements[0].ContractCommitmentId' AS commitment_id,
        ContractApplied ->> '$.Elements[0].ContractId' AS contract_id,
        CASE
            WHEN ChargeCategory = 'Purchase' OR (CommitmentDiscountId IS NULL AND ChargeFrequency = 'Recurring')
                THEN 'payment'
            WHEN CommitmentDiscountStatus = 'Unused' THEN 'unused'
            WHEN CommitmentDiscountStatus = 'Used' THEN 'used'
            ELSE 'covered'
        END AS role
    FROM charges
),

commitments AS (
    SELECT
        ProviderName,
        BillingAccountId,
        BillingCurrency,
        contract_id,
        commitment_id,
        any_value(CommitmentDiscountType) AS discount_type,
        any_value(CommitmentDiscountCategory) AS discount_category,
        any_value(CommitmentDiscountName) AS discount_name,
        any_value(ChargeDescription ORDER BY ChargePeriodStart) FILTER (WHERE role = 'payment') AS payment_description,
        min(x_CommitmentTermStart) AS stated_start,
        max(x_CommitmentTermEnd) AS stated_end,
        min(ChargePeriodStart) FILTER (WHERE role = 'payment') AS first_payment,
        min(ChargePeriodStart) AS first_charge,
        max(ChargePeriodEnd) AS last_charge,
        sum(BilledCost) FILTER (WHERE role = 'payment') AS purchased,
        sum(BilledCost) FILTER (WHERE role = 'payment' AND ChargeFrequency = 'One-Time') AS one_time,
        sum(BilledCost) FILTER (WHERE role = 'payment' AND ChargeFrequency <> 'One-Time') AS recurring,
        -- the hours the recurring fees seen cover, end to end
        (
            epoch(max(ChargePeriodEnd) FILTER (WHERE role = 'payment' AND ChargeFrequency <> 'One-Time'))
            - epoch(min(ChargePeriodStart) FILTER (WHERE role = 'payment' AND ChargeFrequency <> 'One-Time'))
        ) / 3600 AS recurring_hours,
        sum(EffectiveCost) FILTER (WHERE role = 'used') AS used,
        sum(EffectiveCost) FILTER (WHERE role = 'unused') AS unused,
        count(*) AS applied_charges,
        min(x_BillingMonth) AS first_month,
        max(x_BillingMonth) AS last_month
    FROM roles
    GROUP BY ProviderName, BillingAccountId, BillingCurrency, contract_id, commitment_id
),

named_terms AS (
    -- the term's length a commitment SKU names (GCP: "Commitment v1: ... for 1 Year"), in years
    SELECT
        *,
        TRY_CAST(regexp_extract(payment_description, '(?i)\bfor (\d+) years?\b', 1) AS INTEGER) AS named_years
    FROM commitments
),

terms AS (
    SELECT
        *,
        CASE
            WHEN stated_start IS NOT NULL AND stated_end IS NOT NULL THEN stated_start
            WHEN named_years IS NOT NULL THEN first_payment
            ELSE first_charge
        END AS term_start,
        CASE
            WHEN stated_start IS NOT NULL AND stated_end IS NOT NULL THEN stated_end
            WHEN named_years IS NOT NULL THEN first_payment + to_years(named_years)
            ELSE last_charge
        END AS term_end,
        CASE
            WHEN stated_start IS NOT NULL AND stated_end IS NOT NULL THEN 'stated by the source'
            WHEN named_years IS NOT NULL
                THEN 'estimated: the first fee hour in the warehouse, plus the years the commitment SKU names'
            ELSE 'estimated: the span of the charges in the warehouse (the source states no term)'
        END AS term_basis
    FROM named_terms
)

SELECT
    BillingCurrency,
    -- a commitment not named by FOCUS 1.2's CommitmentDiscountId is a GCP committed use discount (x_CommitmentId)
    coalesce(
        discount_category,
        CASE WHEN payment_description ILIKE '%dollar base%' THEN 'Spend' ELSE 'Usage' END
    ) AS ContractCommitmentCategory,
    CAST(
        round(
            coalesce(one_time, 0)
            + coalesce(recurring * CAST((epoch(term_end) - epoch(term_start)) / 3600 AS DECIMAL(18, 6))
                / CAST(recurring_hours AS DECIMAL(18, 6)), 0),
            2
        ) AS DECIMAL(38, 10)
    ) AS ContractCommitmentCost,
    coalesce(discount_name, payment_description, commitment_id) AS ContractCommitmentDescription,
    commitment_id AS ContractCommitmentId,
    term_end AS ContractCommitmentPeriodEnd,
    term_start AS ContractCommitmentPeriodStart,
    CAST(NULL AS DECIMAL(38, 10)) AS ContractCommitmentQuantity,
    coalesce(discount_type, 'Committed Use Discount') AS ContractCommitmentType,
    CAST(NULL AS VARCHAR) AS ContractCommitmentUnit,
    contract_id AS ContractId,
    term_end AS ContractPeriodEnd,
    term_start AS ContractPeriodStart,
    ProviderName AS x_ProviderName,
    BillingAccountId AS x_BillingAccountId,
    purchased AS x_PurchasedCost,
    used AS x_UsedCost,
    unused AS x_UnusedCost,
    applied_charges AS x_AppliedCharges,
    first_month AS x_FirstBillingMonth,
    last_month AS x_LastBillingMonth,
    term_basis AS x_TermBasis,
    CASE
        WHEN recurring IS NULL THEN 'its one-time purchases'
        ELSE 'estimated: its one-time purchases, plus the recurring fee per hour seen times the hours of the term'
    END AS x_CostBasis
FROM terms
