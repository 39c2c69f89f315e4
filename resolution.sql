SELECT {{.Projection}} FROM (
  SELECT *, ROW_NUMBER() OVER (
    PARTITION BY {{.PartitionBy}}
    ORDER BY {{.Version}} DESC
  ) AS _meterstore_rank
  FROM {{.Source}}
) AS _meterstore_resolved WHERE _meterstore_rank = 1
