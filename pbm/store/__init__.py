"""The store: sqlmodel models, migrations, engine and session setup, and the queries
several modules share. The only place that knows the database servers (SQLite's and
PostgreSQL's settings, locking and failures); services and the application build the
queries of their own with SQLAlchemy expressions, never SQL text."""
