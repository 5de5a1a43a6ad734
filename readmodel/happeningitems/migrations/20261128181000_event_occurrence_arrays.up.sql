-- Each happening's occurrences as the list's arrays (in start order, the
-- occurrence rows' columns), written by the eventitems projector with the
-- happening, so that a page of items reads them with the happening's row
-- instead of gathering each item's occurrence rows (issue 40). NULL until
-- the projector's version 4 has rebuilt the read model from the log; a
-- list gathers the rows of such a happening as before.
ALTER TABLE calendar_events
    ADD COLUMN IF NOT EXISTS occurrence_ids uuid[],
    ADD COLUMN IF NOT EXISTS occurrence_instances uuid[],
    ADD COLUMN IF NOT EXISTS occurrence_starts timestamptz[],
    ADD COLUMN IF NOT EXISTS occurrence_ends timestamptz[],
    ADD COLUMN IF NOT EXISTS occurrence_statuses text[],
    ADD COLUMN IF NOT EXISTS occurrence_instance_ends timestamptz[];
