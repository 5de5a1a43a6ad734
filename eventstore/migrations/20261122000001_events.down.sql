DROP TABLE IF EXISTS projection_checkpoints;
--bun:split
DROP TABLE IF EXISTS events;
