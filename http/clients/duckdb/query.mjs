// Runs one DuckDB SQL statement (the first argument) with the engine the
// @duckdb/node-api package ships, and prints its columns (name and DuckDB
// type) and rows as JSON: what the service's tests read its extracts and
// log back with (http/extracts_test.go, docs/analysts.md's recipe).
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
if (!sql) {
  console.error('usage: node query.mjs "<sql>"');
  process.exit(2);
}
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const reader = await conn.runAndReadAll(sql);
const columns = reader.columnNames().map((name, i) => ({ name, type: reader.columnType(i).toString() }));
console.log(JSON.stringify({ columns, rows: reader.getRowObjectsJson() }));
