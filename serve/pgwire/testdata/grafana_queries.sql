-- What Grafana's PostgreSQL data source sends, with where it comes from (repository,
-- path, commit of the source read). Grafana cannot run here: the texts are rebuilt from
-- that source (the TypeScript template literals verbatim, whitespace included), and the
-- macros appear as the backend expands them for the time range given. The backend runs
-- every statement through the simple query protocol (pgx PgConn.Exec in
-- pkg/tsdb/grafana-postgresql-datasource/pgx/sql_engine.go execQuery; database/sql Query
-- without arguments in the older lib/pq engine), so TestPGWireClientStatements replays
-- them that way. Blocks: "-- name:", "-- call:" (the source), optional "-- macro:" (the
-- statement as written in Grafana, before expansion), then the statement.

-- name: health/pgx
-- call: pgx/v5 PgConn.Ping, what pgxpool.Pool.Ping sends: CheckHealth in grafana/grafana pkg/tsdb/grafana-postgresql-datasource/pgx/handler_checkhealth.go @1b13755cdccfbc5420c9fcb7d6cf2dad7b2888e6 calls e.pool.Ping(ctx); jackc/pgx v5.12.0 pgconn/pgconn.go Ping
-- ping

-- name: health/lib-pq
-- call: lib/pq conn.Ping (conn_go18.go @456e9f2286167b1419741db297f8b14002d435f5), what Grafana's lib/pq-based CheckHealth (pkg/tsdb/grafana-postgresql-datasource/sqleng/handler_checkhealth.go) sends through database/sql's Ping
;

-- name: settings/version
-- call: getVersion(), run by the data source settings page (configuration/useAutoDetectFeatures.ts) to detect the server version; grafana/grafana public/app/plugins/datasource/grafana-postgresql-datasource/postgresMetaQuery.ts @12f912ab8d010f4d95a4043a0efaa20fc4ca0100
SELECT current_setting('server_version_num')::int/100 as version

-- name: settings/timescaledb
-- call: getTimescaleDBVersion(), run when the version is ≥ 9.6; grafana/grafana public/app/plugins/datasource/grafana-postgresql-datasource/postgresMetaQuery.ts @12f912ab8d010f4d95a4043a0efaa20fc4ca0100
SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'

-- name: editor/schemas
-- call: showSchemas(); grafana/grafana public/app/plugins/datasource/grafana-postgresql-datasource/postgresMetaQuery.ts @12f912ab8d010f4d95a4043a0efaa20fc4ca0100
SELECT schema_name AS "name"
    FROM information_schema.schemata
    WHERE schema_name NOT IN ('information_schema',
                              'pg_catalog',
                              'pg_toast',
                              '_timescaledb_cache',
                              '_timescaledb_catalog',
                              '_timescaledb_internal',
                              '_timescaledb_config',
                              'timescaledb_information',
                              'timescaledb_experimental')
    ORDER BY schema_name

-- name: editor/tables
-- call: showTables(): the query editor's table list (fetchTables) and the code editor's completion; grafana/grafana public/app/plugins/datasource/grafana-postgresql-datasource/postgresMetaQuery.ts @12f912ab8d010f4d95a4043a0efaa20fc4ca0100
SELECT
    CASE WHEN 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ('information_schema',
                             'pg_catalog',
                             '_timescaledb_cache',
                             '_timescaledb_catalog',
                             '_timescaledb_internal',
                             '_timescaledb_config',
                             'timescaledb_information',
                             'timescaledb_experimental')
    ORDER BY CASE WHEN 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          ) THEN 0 ELSE 1 END, 1

-- name: editor/tables-of-schema
-- call: showTables('public'); grafana/grafana public/app/plugins/datasource/grafana-postgresql-datasource/postgresMetaQuery.ts @12f912ab8d010f4d95a4043a0efaa20fc4ca0100
SELECT quote_ident(table_name) AS "table"
      FROM information_schema.tables
      WHERE quote_ident(table_schema) = 'public'
      ORDER BY 1

-- name: editor/columns
-- call: getSchema('readings'): the query builder's column list with data types (fetchFields); the type decides the column's kind (sqlUtil.ts getFieldConfig: 'timestamp with time zone' is a datetime, 'numeric' a number); grafana/grafana public/app/plugins/datasource/grafana-postgresql-datasource/postgresMetaQuery.ts @12f912ab8d010f4d95a4043a0efaa20fc4ca0100
SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('readings'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('readings'))[1]
          AND quote_ident(table_name) = (parse_ident('readings'))[2]
        ELSE quote_ident(table_name) = 'readings'
          AND 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      END

-- name: editor/columns-qualified
-- call: getSchema('public.readings'): a table picked with its schema; grafana/grafana public/app/plugins/datasource/grafana-postgresql-datasource/postgresMetaQuery.ts @12f912ab8d010f4d95a4043a0efaa20fc4ca0100
SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('public.readings'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('public.readings'))[1]
          AND quote_ident(table_name) = (parse_ident('public.readings'))[2]
        ELSE quote_ident(table_name) = 'public.readings'
          AND 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      END

-- name: builder/table
-- call: the visual builder's SQL (packages/grafana-sql toRawSql/createSelectClause: columns, FROM, LIMIT 50) as a table panel sends it
SELECT malo_id, "from", value FROM readings LIMIT 50 

-- name: builder/time-series
-- call: the visual builder with the $__timeGroupAlias macro, sum(value) and a time filter, as the backend expands it (grafana/grafana pkg/tsdb/grafana-postgresql-datasource/macros.go @0577088076c3920f31aa0ca03cf8ac62e08f4d5b; time range 2025-10-23T00:00:00Z to 2025-10-26T12:00:00Z)
-- macro: SELECT $__timeGroupAlias("from", 1d), sum(value) AS "value" FROM readings WHERE $__timeFilter("from") GROUP BY 1 ORDER BY 1 
SELECT floor(extract(epoch from "from")/86400)*86400 AS "time", sum(value) AS "value" FROM readings WHERE "from" BETWEEN '2025-10-23T00:00:00Z' AND '2025-10-26T12:00:00Z' GROUP BY 1 ORDER BY 1 

-- name: code/time-series-metric
-- call: a code-mode time series with a metric column and $__timeGroup (pre-5.3 alias form: a comma follows, so it expands as $__timeGroupAlias); grafana/grafana pkg/tsdb/grafana-postgresql-datasource/macros.go @0577088076c3920f31aa0ca03cf8ac62e08f4d5b; time range 2025-10-23T00:00:00Z to 2025-10-26T12:00:00Z
-- macro: SELECT   $__timeGroup("from", '1h'),   malo_id AS metric,   avg(value) AS value FROM readings WHERE $__timeFilter("from") GROUP BY 1, 2 ORDER BY 1
SELECT
  floor(extract(epoch from "from")/3600)*3600 AS "time",
  malo_id AS metric,
  avg(value) AS value
FROM readings
WHERE "from" BETWEEN '2025-10-23T00:00:00Z' AND '2025-10-26T12:00:00Z'
GROUP BY 1, 2
ORDER BY 1

-- name: code/time
-- call: $__time and $__timeFilter in a table of raw readings; grafana/grafana pkg/tsdb/grafana-postgresql-datasource/macros.go @0577088076c3920f31aa0ca03cf8ac62e08f4d5b; time range 2025-10-23T00:00:00Z to 2025-10-26T12:00:00Z
-- macro: SELECT $__time("from"), value, quality FROM readings WHERE $__timeFilter("from") ORDER BY 1 LIMIT 5
SELECT "from" AS "time", value, quality FROM readings WHERE "from" BETWEEN '2025-10-23T00:00:00Z' AND '2025-10-26T12:00:00Z' ORDER BY 1 LIMIT 5

-- name: code/time-epoch
-- call: $__timeEpoch, $__timeFrom() and $__timeTo(); grafana/grafana pkg/tsdb/grafana-postgresql-datasource/macros.go @0577088076c3920f31aa0ca03cf8ac62e08f4d5b; time range 2025-10-23T00:00:00Z to 2025-10-26T12:00:00Z
-- macro: SELECT $__timeEpoch("from"), value FROM readings WHERE "from" >= $__timeFrom() AND "from" < $__timeTo() ORDER BY 1 LIMIT 5
SELECT extract(epoch from "from") as "time", value FROM readings WHERE "from" >= '2025-10-23T00:00:00Z' AND "from" < '2025-10-26T12:00:00Z' ORDER BY 1 LIMIT 5
