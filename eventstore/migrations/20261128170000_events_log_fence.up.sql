-- The log's own fence (issue 38). Readers used to read below the oldest
-- transaction running anywhere on the server; now they read below the
-- oldest transaction that may still append to this log
-- (eventstore_fence() below; the proof is in eventstore/postgres.go).
-- They find those transactions by a lock every appender holds: the shared
-- advisory lock (1702259316, 1634758757) ("evnt", "appe"), taken by this
-- trigger before the first insert into events of a transaction, and held
-- until it ends. Shared, so appenders never wait on each other for it.
--
-- The lock must be taken before the transaction has a transaction id: a
-- reader treats an id it saw without the lock as not appending, and would
-- move past its events. A transaction that wrote something else first
-- (and so has an id) is therefore refused its first append; it must append
-- first, or take the lock itself with eventstore_begin_append() before
-- writing anything.
CREATE OR REPLACE FUNCTION eventstore_begin_append() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('eventstore.appending', true) IS DISTINCT FROM 'on' THEN
        IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
            RAISE EXCEPTION 'events can only be appended by a transaction that appends before it writes anything else'
                USING ERRCODE = '55000',
                      HINT = 'append first, or call eventstore_begin_append() at the start of the transaction';
        END IF;
        PERFORM pg_advisory_xact_lock_shared(1702259316, 1634758757);
        PERFORM set_config('eventstore.appending', 'on', true);
    END IF;
END $$;
--bun:split
-- The trigger's function repeats eventstore_begin_append() rather than
-- call it: one call fewer on every append.
CREATE OR REPLACE FUNCTION events_fence_appender() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('eventstore.appending', true) IS DISTINCT FROM 'on' THEN
        IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
            RAISE EXCEPTION 'events can only be appended by a transaction that appends before it writes anything else'
                USING ERRCODE = '55000',
                      HINT = 'append first, or call eventstore_begin_append() at the start of the transaction';
        END IF;
        PERFORM pg_advisory_xact_lock_shared(1702259316, 1634758757);
        PERFORM set_config('eventstore.appending', 'on', true);
    END IF;
    RETURN NULL;
END $$;
--bun:split
DROP TRIGGER IF EXISTS events_fence_appender ON events;
--bun:split
CREATE TRIGGER events_fence_appender BEFORE INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_fence_appender();
--bun:split
-- The fence itself: every transaction that may still append to the log
-- has an xid at or above it (see eventstore/postgres.go for the proof).
-- STABLE, so that it reads the calling statement's snapshot; its steps
-- run in this order on purpose: the lock holders, then their xids, then
-- the snapshot's transactions that have ended.
CREATE OR REPLACE FUNCTION eventstore_fence() RETURNS xid8
LANGUAGE plpgsql STABLE AS $$
DECLARE
    snap     pg_snapshot := pg_current_snapshot();
    top      xid8 := pg_snapshot_xmax(snap);
    holders  int[];
    unknown  boolean;
    appender xid8;
    ended    xid8;
BEGIN
    -- 1. The transactions holding the appenders' lock in this database.
    SELECT coalesce(array_agg(pid), '{}'), coalesce(bool_or(pid IS NULL), false)
    INTO holders, unknown
    FROM pg_locks
    WHERE locktype = 'advisory' AND granted
      AND classid = 1702259316 AND objid = 1634758757 AND objsubid = 2
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
    -- 2. Their xids, read after step 1 (a fresh read of the backends,
    -- not the transaction's cached one). An xid is 32 bits here: widened
    -- by its signed distance from the snapshot's xmax; only those below
    -- it matter. A holder this role may not see (or a prepared
    -- transaction, which has no pid) could have any xid: the fence is
    -- then the oldest running transaction's, as it was before.
    IF cardinality(holders) > 0 THEN
        PERFORM pg_stat_clear_snapshot();
        SELECT min(d.x), unknown OR coalesce(bool_or(d.hidden), false)
        INTO appender, unknown
        FROM (
            SELECT a.query = '<insufficient privilege>' AS hidden,
                CASE WHEN a.backend_xid IS NOT NULL THEN
                    (top::text::bigint + mod(a.backend_xid::text::bigint - mod(top::text::bigint, 4294967296)
                        + 6442450944, 4294967296) - 2147483648)::text::xid8
                END AS x
            FROM unnest(holders) AS h(pid), LATERAL pg_stat_get_activity(h.pid) AS a
        ) AS d
        WHERE d.x IS NULL OR d.x < top;
        IF unknown THEN
            RETURN pg_snapshot_xmin(snap);
        END IF;
    END IF;
    -- 3. The snapshot's running transactions that have ended since it was
    -- taken: it does not show their events, which are final now.
    SELECT min(x) INTO ended FROM pg_snapshot_xip(snap) AS x
    WHERE pg_xact_status(x) IS DISTINCT FROM 'in progress';
    RETURN least(top, appender, ended);
END $$;
