DROP FUNCTION IF EXISTS eventstore_fence();
--bun:split
DROP TRIGGER IF EXISTS events_fence_appender ON events;
--bun:split
DROP FUNCTION IF EXISTS events_fence_appender();
--bun:split
DROP FUNCTION IF EXISTS eventstore_begin_append();
