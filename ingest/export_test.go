package ingest

// PollsPerArticle lets the schedule's outside tests reckon a busy source's
// interval as the scheduler does.
const PollsPerArticle = pollsPerArticle
