"""The store: sqlmodel models, engine and session setup, queries. The only place that knows SQL."""
