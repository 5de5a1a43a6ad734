-- What each event document answered when it was last read whole: its
-- cache validators (replayed as If-None-Match / If-Modified-Since on the
-- next re-read) and a digest of its body, so that a re-read that finds it
-- unchanged costs a 304 or a hash, not a parse and a dozen statements.
-- read_at bounds how long an unchanged document is trusted (see
-- ingest.Config.RereadWholeEvery), and accepting_since is the latest
-- domain.AcceptingSince of the source's attachments that read saw: an
-- attachment attached or re-enabled since must be offered what the
-- document holds, so it is read whole again. distrusted_at is when a
-- happening the document may take up was let go by another
-- (crawlstate.ReleaseHappenings): a read begun before it is not trusted.
-- Empty until a read completes.
ALTER TABLE ingest_event_documents
    ADD COLUMN IF NOT EXISTS etag            text,
    ADD COLUMN IF NOT EXISTS last_modified   text,
    ADD COLUMN IF NOT EXISTS digest          bytea,
    ADD COLUMN IF NOT EXISTS read_at         timestamptz,
    ADD COLUMN IF NOT EXISTS accepting_since timestamptz,
    ADD COLUMN IF NOT EXISTS distrusted_at   timestamptz;
