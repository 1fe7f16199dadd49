"""Where records are stored: the in-memory recorder, the SQL both SQL recorders share and its text,
the SQLite and PostgreSQL recorders, each with the ledger class that opens one, and opening a ledger
by URL. Each recorder implements the backend contract (``Recorder``)."""
