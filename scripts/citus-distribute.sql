-- Shards a FetchCast PostgreSQL store (schema 4) with Citus: every device-keyed table by
-- device_id, colocated, so that one device's events, aggregates and model state sit on one
-- shard; the small tables every shard needs as reference tables. Run once on the coordinator,
-- after FetchCast created or upgraded the schema (`fetchcast ingest`, `model` or `serve` of this
-- version) and before serving from it:
--   psql "postgres://USER@HOST:PORT/DB" -v ON_ERROR_STOP=1 -f scripts/citus-distribute.sql
-- Tables that already hold rows are copied into their shards; the local copies stay on disk
-- until `SELECT truncate_local_data_after_distributing_table('TABLE')` (see docs/postgres.md).
SELECT create_distributed_table('devices', 'device_id');
SELECT create_distributed_table('event_log', 'device_id', colocate_with => 'devices');
SELECT create_distributed_table('file_counts', 'device_id', colocate_with => 'devices');
SELECT create_distributed_table('file_days', 'device_id', colocate_with => 'devices');
SELECT create_distributed_table('device_state', 'device_id', colocate_with => 'devices');
SELECT create_reference_table('apps');
SELECT create_reference_table('files');
SELECT create_reference_table('fetchcast_meta');
SELECT create_reference_table('model_state');
