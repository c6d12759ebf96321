-- PLACEHOLDER (being written)
SELECT 1 AS placeholder WHERE false
