"""Where records are stored: the in-memory ledger, the SQL both SQL ledgers share and its text, the
SQLite and PostgreSQL ledgers, and opening a ledger by URL. Each implements the contract."""
