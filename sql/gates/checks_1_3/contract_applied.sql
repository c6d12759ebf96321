-- FOCUS 1.3 ContractApplied: a JSON object whose Elements is a non-empty array of objects naming a ContractId and a
-- ContractCommitmentId of the ContractCommitment dataset, with either a numeric ContractCommitmentAppliedCost or an
-- applied quantity and unit (the other NULL or absent), and no other key but x_ ones.
WITH applied AS (
    SELECT x_SourceFile, x_SourceLineItemId, ContractApplied
    FROM focus_1_3_rows
    WHERE ContractApplied IS NOT NULL
),

elements AS (
    SELECT x_SourceFile, x_SourceLineItemId, unnest(CAST(json_extract(ContractApplied, '$.Elements') AS JSON[])) AS e
    FROM applied
    WHERE json_valid(ContractApplied) AND json_type(ContractApplied, '$.Elements') = 'ARRAY'
),

commitments AS (
    SELECT ContractId, ContractCommitmentId FROM focus_1_3_commitments
)

SELECT 'ContractApplied' AS column_name, 'no JSON object with a non-empty Elements array' AS problem,
    x_SourceFile, x_SourceLineItemId
FROM applied
WHERE NOT json_valid(ContractApplied) OR json_type(ContractApplied) <> 'OBJECT'
    OR coalesce(json_type(ContractApplied, '$.Elements'), '') <> 'ARRAY'
    OR json_array_length(ContractApplied, '$.Elements') = 0
UNION ALL
SELECT 'ContractApplied', 'an element without string ContractId and ContractCommitmentId, with both or neither of'
    || ' an applied cost and an applied quantity and unit, or with a key that is neither FOCUS''s nor x_',
    x_SourceFile, x_SourceLineItemId
FROM elements
WHERE json_type(e) <> 'OBJECT'
    OR coalesce(json_type(e, '$.ContractId'), '') <> 'VARCHAR'
    OR coalesce(json_type(e, '$.ContractCommitmentId'), '') <> 'VARCHAR'
    OR (coalesce(json_type(e, '$.ContractCommitmentAppliedCost'), 'NULL') <> 'NULL')
    = (coalesce(json_type(e, '$.ContractCommitmentAppliedQuantity'), 'NULL') <> 'NULL')
    OR (coalesce(json_type(e, '$.ContractCommitmentAppliedQuantity'), 'NULL') <> 'NULL')
    <> (coalesce(json_type(e, '$.ContractCommitmentAppliedUnit'), 'NULL') <> 'NULL')
    OR EXISTS (
        SELECT 1 FROM unnest(json_keys(e)) AS k(key)
        WHERE key NOT IN (
            'ContractId', 'ContractCommitmentId', 'ContractCommitmentAppliedCost',
            'ContractCommitmentAppliedQuantity', 'ContractCommitmentAppliedUnit'
        ) AND NOT starts_with(key, 'x_')
    )
UNION ALL
SELECT 'ContractApplied', 'names ' || coalesce(e ->> '$.ContractCommitmentId', 'no commitment')
    || ' of contract ' || coalesce(e ->> '$.ContractId', 'none') || ', which the ContractCommitment dataset lacks',
    x_SourceFile, x_SourceLineItemId
FROM elements
WHERE NOT EXISTS (
    SELECT 1 FROM commitments AS c
    WHERE c.ContractCommitmentId = (e ->> '$.ContractCommitmentId') AND c.ContractId = (e ->> '$.ContractId')
)
