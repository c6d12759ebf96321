"""The warehouse every stage writes: the home and its run lock, DuckDB connections, schemas, macros and the SQL
files."""
