ALTER TABLE calendar_events RESET (toast_tuple_target)
    , ALTER COLUMN current_head SET STORAGE EXTENDED
    , ALTER COLUMN current_published SET STORAGE EXTENDED
    , ALTER COLUMN current_tail SET STORAGE EXTENDED
    , ALTER COLUMN legacy_head SET STORAGE EXTENDED
    , ALTER COLUMN legacy_published SET STORAGE EXTENDED
    , ALTER COLUMN legacy_tail SET STORAGE EXTENDED
    , ALTER COLUMN source_block SET STORAGE EXTENDED
    , ALTER COLUMN occurrence_ids SET STORAGE EXTENDED
    , ALTER COLUMN occurrence_instances SET STORAGE EXTENDED
    , ALTER COLUMN occurrence_starts SET STORAGE EXTENDED
    , ALTER COLUMN occurrence_ends SET STORAGE EXTENDED
    , ALTER COLUMN occurrence_statuses SET STORAGE EXTENDED
    , ALTER COLUMN occurrence_instance_ends SET STORAGE EXTENDED
;
