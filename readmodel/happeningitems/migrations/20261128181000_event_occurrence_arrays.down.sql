ALTER TABLE calendar_events
    DROP COLUMN IF EXISTS occurrence_ids,
    DROP COLUMN IF EXISTS occurrence_instances,
    DROP COLUMN IF EXISTS occurrence_starts,
    DROP COLUMN IF EXISTS occurrence_ends,
    DROP COLUMN IF EXISTS occurrence_statuses,
    DROP COLUMN IF EXISTS occurrence_instance_ends;
