-- Nothing to undo: the re-read only forgot what the crawler remembers to
-- save requests.
SELECT 1;
