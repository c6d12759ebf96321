-- Where each team's month could have been cheaper: every ESTIMATED saving of the advice stage (right-sizing,
-- cheaper provider, spot, checkpoint interval and retention, notebook auto-stop; owned GPUs company-wide with
-- team NULL), ranked per month, team and currency, in cents, with its method, its evidence and the runs behind
-- it (join views.completed_runs on run_group). Estimates overlap, so they are never added up; none is billed.
SELECT
    month,
    team,
    currency,
    rank,
    opportunity,
    cents(estimated_saving) AS estimated_saving,
    method,
    evidence,
    run_groups
FROM advice.opportunities
ORDER BY month, team NULLS FIRST, currency, rank
