-- Whether delivery $id lists a line item in two of its files: the same origin line item (in any letter case) and
-- charge period start staged from different files (a file copied under another name, rows repeated in another
-- part). Within one part its source totals count the repeats; this finds those across parts, in the FOCUS rows
-- every part staged.
SELECT count(*) > 0
FROM (
    SELECT lower(origin_line_item(x_SourceLineItemId)) AS line_item, ChargePeriodStart
    FROM focus.cost_rows
    WHERE x_DeliveryId = $id
    GROUP BY ALL
    HAVING count(DISTINCT x_SourceFile) > 1
)
