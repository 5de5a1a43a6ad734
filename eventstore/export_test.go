package eventstore

// ReadAllSQL lets the tests EXPLAIN the exact query ReadAll runs.
const ReadAllSQL = readAllSQL
