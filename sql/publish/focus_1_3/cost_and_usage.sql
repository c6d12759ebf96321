-- FOCUS 1.3 CostAndUsage: the stored FOCUS 1.2 rows with the columns 1.3 adds (docs/decisions/0016). Every 1.2
-- column and value is kept (ProviderName and PublisherName are deprecated in 1.3, not removed); the Allocated*
-- columns are NULL here (the allocated rows are allocated_cost_and_usage.sql). gpuledger/publish/focus_1_3.py
-- projects the result onto the 1.3 column order. No parameters.
WITH costs AS (
    SELECT * FROM focus.costs
),

commitments AS (
    -- the commitment a charge pays for or consumed (GCP CUDs carry theirs in x_CommitmentId), and its contract:
    -- an Azure reservation or savings plan belongs to its order, an AWS RI/SP or a GCP CUD is its own contract
    SELECT
        *,
        coalesce(CommitmentDiscountId, x_CommitmentId) AS commitment_id,
        CASE
            WHEN regexp_matches(commitment_id, '(?i)/(reservationorders|savingsplanorders)/[^/]+/')
                THEN regexp_extract(commitment_id, '(?i)^(.*/(reservationorders|savingsplanorders)/[^/]+)/', 1)
            ELSE commitment_id
        END AS contract_id,
        -- what the charge applied to the commitment: a purchase pays it, usage consumes its amortized cost
        CASE WHEN ChargeCategory = 'Purchase' THEN BilledCost ELSE EffectiveCost END AS applied_cost
    FROM costs
)

SELECT
    * EXCLUDE (commitment_id, contract_id, applied_cost),
    CAST(NULL AS VARCHAR) AS AllocatedMethodDetails,
    CAST(NULL AS VARCHAR) AS AllocatedMethodId,
    CAST(NULL AS VARCHAR) AS AllocatedResourceId,
    CAST(NULL AS VARCHAR) AS AllocatedResourceName,
    CAST(NULL AS VARCHAR) AS AllocatedTags,
    CASE
        WHEN commitment_id IS NOT NULL THEN CAST(json_object('Elements', json_array(json_object(
            'ContractId', contract_id,
            'ContractCommitmentId', commitment_id,
            'ContractCommitmentAppliedCost', applied_cost
        ))) AS VARCHAR)
    END AS ContractApplied,
    -- the seller (the producer, or a marketplace's seller), which 1.2's PublisherName names
    PublisherName AS ServiceProviderName,
    -- a provider hosts its own services; who hosts a marketplace seller's or a tax's cannot be told from the bill
    CASE WHEN ChargeCategory <> 'Tax' AND PublisherName = ProviderName THEN ProviderName END AS HostProviderName
FROM commitments
