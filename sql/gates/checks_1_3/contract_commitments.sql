-- FOCUS 1.3 ContractCommitment: each commitment once, its period within its contract's, periods that start before
-- they end, and an ISO 4217 BillingCurrency.
WITH commitments AS (
    SELECT * FROM focus_1_3_commitments
)

SELECT 'ContractCommitmentId' AS column_name, 'the commitment appears ' || count(*) || ' times' AS problem,
    any_value(x_ProviderName) AS x_SourceFile, ContractCommitmentId AS x_SourceLineItemId
FROM commitments
GROUP BY ContractCommitmentId
HAVING count(*) > 1
UNION ALL
SELECT 'ContractCommitmentPeriodStart', 'the commitment''s period does not start before it ends, or lies outside its'
    || ' contract''s', x_ProviderName, ContractCommitmentId
FROM commitments
WHERE ContractCommitmentPeriodStart >= ContractCommitmentPeriodEnd OR ContractPeriodStart >= ContractPeriodEnd
    OR ContractCommitmentPeriodStart < ContractPeriodStart OR ContractCommitmentPeriodEnd > ContractPeriodEnd
UNION ALL
SELECT 'BillingCurrency', BillingCurrency || ' is not an ISO 4217 code', x_ProviderName, ContractCommitmentId
FROM commitments
WHERE BillingCurrency NOT IN (SELECT code FROM ref.iso_4217)
