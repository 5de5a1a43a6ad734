DROP TABLE IF EXISTS projection_rebuilds;
--bun:split
ALTER TABLE projection_checkpoints DROP COLUMN IF EXISTS version;
