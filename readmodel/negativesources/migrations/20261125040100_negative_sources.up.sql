-- Sources ranked by their share of negative feedback, per organization
-- (GET /insights/sources/negative): the README's worked example of a new
-- insight. The table is created empty; the negativesources projector fills
-- it from the whole log on its first run, or on `feedsvc projections
-- rebuild negativesources`.
CREATE TABLE IF NOT EXISTS insight_source_ratings (
    organization_id uuid   NOT NULL,
    source_id       uuid   NOT NULL,
    positive        bigint NOT NULL DEFAULT 0,
    negative        bigint NOT NULL DEFAULT 0,
    neutral         bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, source_id)
);
