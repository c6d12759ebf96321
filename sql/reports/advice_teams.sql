-- The teams `gpuledger advise --team` may name: every team charged in any month (showback.team_month). No
-- parameters.
SELECT DISTINCT team
FROM showback.team_month
ORDER BY team
