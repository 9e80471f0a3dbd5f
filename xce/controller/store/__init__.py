"""Persistence: the schema, the engines (SQLite, PostgreSQL) and the migrations that build it."""
