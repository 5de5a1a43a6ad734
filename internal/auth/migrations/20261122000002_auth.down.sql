DROP TABLE IF EXISTS api_keys;
--bun:split
DROP TABLE IF EXISTS organizations;
