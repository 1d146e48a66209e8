"""Query engine over a read-only graph directory: snapping, searches, tables. No FastAPI here."""
