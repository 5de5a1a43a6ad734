DROP TABLE IF EXISTS insight_source_ratings;
