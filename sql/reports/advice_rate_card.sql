-- The rate card the advice estimates are priced from (advice.rate_card): whether it is the seeded EXAMPLE card,
-- when its prices were read and where from. No parameters.
SELECT
    coalesce(bool_or(example), false) AS example,
    coalesce(list(DISTINCT as_of ORDER BY as_of), []) AS as_of,
    coalesce(list(DISTINCT source ORDER BY source), []) AS sources,
    count(*) AS prices
FROM advice.rate_card
