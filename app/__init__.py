"""starroute online side: the query engine (`app.engine`) and the HTTP API (`app.api`)."""

import preprocessing  # noqa: E402, F401 - numpy without its huge-page advice (see `preprocessing`)
