-- Rounding of the analyst file's views (stored in the file, like billing_month(): the views call them on the
-- analysts' connections). Views show money in cents and GPU-hours in tenths; the tables keep the exact figures.
-- No parameters.

-- An amount of money rounded to cents (half away from zero), as DECIMAL(18, 2).
CREATE OR REPLACE MACRO cents(amount) AS CAST(round(amount, 2) AS DECIMAL(18, 2));

-- The parts of a total, each rounded to cents so that they add up to the total rounded to cents (largest
-- remainder: every part floored to the cent, the cents the floors lost going to the parts that lost the most,
-- the earlier part first on a tie). parts: a list of amounts; returns the list of DECIMAL(18, 2) parts in order.
CREATE OR REPLACE MACRO cents_that_foot(parts) AS list_transform(
    parts,
    lambda part, i: CAST(
        (
            floor(part * 100)
            + CASE
                -- the parts ahead of this one (lost more, or as much and come earlier) take the lost cents first
                WHEN len(list_filter(
                    range(1, len(parts) + 1),
                    lambda j: parts[j] * 100 - floor(parts[j] * 100) > part * 100 - floor(part * 100)
                        OR (parts[j] * 100 - floor(parts[j] * 100) = part * 100 - floor(part * 100) AND j < i)
                )) < round(list_sum(parts) * 100) - list_sum(list_transform(parts, lambda p: floor(p * 100)))
                    THEN 1
                ELSE 0
            END
        ) / 100 AS DECIMAL(18, 2)
    )
);

-- GPU-hours rounded to a tenth (six GPU-minutes), as DECIMAL(18, 1).
CREATE OR REPLACE MACRO tenths(hours) AS CAST(round(hours, 1) AS DECIMAL(18, 1));
