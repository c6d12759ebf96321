-- Google's FOCUS view (template 2024-03-19), each record of temp table gcp_bq_lines rewritten as the billing
-- export record it was made from: the view keeps cost before credits in BilledCost and the credits in
-- x_Credits, so the export model (and its credit policy) applies unchanged. Lines that are no JSON object pass
-- through as they are, for the export's own checks to refuse. No parameters.
WITH lines AS (
    SELECT
        *,
        CASE WHEN json_valid(line) AND json_type(line) = 'OBJECT' THEN json_transform(line, '{"Tags": [{"key": "VARCHAR", "value": "VARCHAR", "x_type": "VARCHAR", "x_inherited": "VARCHAR", "x_namespace": "VARCHAR"}], "x_Credits": [{"Name": "VARCHAR", "Amount": "VARCHAR", "FullName": "VARCHAR", "Id": "VARCHAR", "Type": "VARCHAR"}]}') END AS nested
    FROM gcp_bq_lines
)

SELECT
    file_index, source_file, source_label, source_row, extract,
    CASE WHEN nested IS NULL THEN line ELSE json_object(
        'billing_account_id', line -> '$.BillingAccountId',
        'invoice', json_object('month', strftime(timezone('America/Los_Angeles',
            TRY_CAST(line ->> '$.BillingPeriodStart' AS TIMESTAMPTZ)), '%Y%m')),
        'cost_type', line -> '$.x_CostType',
        'service', json_object('id', line -> '$.x_ServiceId', 'description', line -> '$.ServiceName'),
        'sku', json_object('id', line -> '$.SkuId', 'description', line -> '$.ChargeDescription'),
        'usage_start_time', line -> '$.ChargePeriodStart',
        'usage_end_time', line -> '$.ChargePeriodEnd',
        'export_time', line -> '$.x_ExportTime',
        'project', json_object('id', line -> '$.x_Project.id', 'number', line -> '$.x_Project.number',
            'name', line -> '$.x_Project.name',
            'labels', to_json(list_transform(list_filter(nested.Tags, e -> e.x_type = 'project_label'),
                e -> {'key': e.key, 'value': e.value}))),
        'labels', to_json(list_transform(list_filter(nested.Tags, e -> e.x_type = 'label'),
            e -> {'key': e.key, 'value': e.value})),
        'system_labels', to_json(list_transform(list_filter(nested.Tags, e -> e.x_type = 'system_label'),
            e -> {'key': e.key, 'value': e.value})),
        'tags', to_json(list_transform(list_filter(nested.Tags, e -> e.x_type = 'tag'),
            e -> {'key': e.key, 'value': e.value, 'inherited': e.x_inherited, 'namespace': e.x_namespace})),
        'location', json_object('location', line -> '$.x_Location', 'region', line -> '$.RegionId',
            'zone', line -> '$.AvailabilityZone'),
        'resource', json_object('name', line -> '$.ResourceName', 'global_name', line -> '$.ResourceId'),
        'usage', json_object('amount', line -> '$.ConsumedQuantity', 'unit', line -> '$.ConsumedUnit'),
        'credits', to_json(list_transform(nested.x_Credits,
            c -> {'name': c.Name, 'amount': c.Amount, 'full_name': c.FullName, 'id': c.Id, 'type': c.Type})),
        'cost', line -> '$.BilledCost',
        'cost_at_list', line -> '$.ListCost',
        'currency', line -> '$.BillingCurrency',
        'currency_conversion_rate', line -> '$.x_CurrencyConversionRate',
        'transaction_type', CASE WHEN coalesce(line ->> '$.PublisherName', 'Google Cloud') = 'Google Cloud'
            THEN 'GOOGLE' ELSE 'THIRD_PARTY_RESELLER' END,
        'seller_name', line -> '$.PublisherName'
    )::VARCHAR END AS line
FROM lines
