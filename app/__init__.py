"""starroute online side: the query engine (`app.engine`) and the HTTP API (`app.api`)."""
