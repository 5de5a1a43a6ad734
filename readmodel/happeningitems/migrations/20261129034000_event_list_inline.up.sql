-- What a page of event items reads of each happening (its renderings and
-- occurrence arrays) is kept in the row, uncompressed (issue 40). With
-- the default TOAST target (2 KB), a happening's row (~5 KB: the details
-- alone ~2.5 KB) had current_tail, legacy_tail and details moved to the
-- TOAST table and the rest compressed, so every item of a page cost a
-- TOAST index probe, a chunk read and a pglz decompression: ~0.07 of the
-- ~0.28 ms of Postgres CPU a 20-item page took (bench/peers/README.md).
-- toast_tuple_target 8160 toasts a row only when it would not fit a page;
-- then STORAGE MAIN keeps the list's columns in the row as long as
-- anything else (details, search) can go. Rows are written this way from
-- the projector's version 6 on (its rebuild rewrites every row).
ALTER TABLE calendar_events SET (toast_tuple_target = 8160)
    , ALTER COLUMN current_head SET STORAGE MAIN
    , ALTER COLUMN current_published SET STORAGE MAIN
    , ALTER COLUMN current_tail SET STORAGE MAIN
    , ALTER COLUMN legacy_head SET STORAGE MAIN
    , ALTER COLUMN legacy_published SET STORAGE MAIN
    , ALTER COLUMN legacy_tail SET STORAGE MAIN
    , ALTER COLUMN source_block SET STORAGE MAIN
    , ALTER COLUMN occurrence_ids SET STORAGE MAIN
    , ALTER COLUMN occurrence_instances SET STORAGE MAIN
    , ALTER COLUMN occurrence_starts SET STORAGE MAIN
    , ALTER COLUMN occurrence_ends SET STORAGE MAIN
    , ALTER COLUMN occurrence_statuses SET STORAGE MAIN
    , ALTER COLUMN occurrence_instance_ends SET STORAGE MAIN
;
