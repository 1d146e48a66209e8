# syntax=docker/dockerfile:1
# starroute: `starroute preprocess` and `starroute serve` in one slim, non-root image.
#   docker build -t starroute .
#   docker run --rm -v "$PWD/data:/data:ro" -v graph:/graph starroute preprocess /data/monaco.osm.pbf -o /graph/current --force
#   docker run --rm -p 127.0.0.1:5000:5000 -v graph:/graph:ro starroute

# --- build: install the package and its wheels into a virtual environment -----------------------------------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# the whole build context: .dockerignore leaves out what is not the package, so the wheel's own package list
# (pyproject.toml: app*, preprocessing*, starroute*) decides what is installed -- a new package needs no line here
COPY . ./
# the tested versions (constraints.txt) with the `dask` extra (`starroute matrix` runs on Dask), then every numba
# kernel compiled into the cache the image ships, so each replica starts warm (about a second) instead of compiling
# (half a minute) -- on a host with the same CPU model; another CPU recompiles once at its first start, as logged
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install -c constraints.txt '.[dask]' \
 && find /opt/venv -name '__pycache__' -prune -exec rm -rf {} + \
 && NUMBA_CACHE_DIR=/var/cache/numba /opt/venv/bin/starroute compile --jobs 2

# --- runtime: the venv only, an unprivileged user, a health check ---------------------------------------------------
FROM python:3.11-slim AS runtime
RUN groupadd --system --gid 10001 starroute \
 && useradd --system --uid 10001 --gid starroute --home-dir /srv --shell /usr/sbin/nologin starroute \
 && mkdir -p /graph /var/cache/numba /srv \
 && chown starroute:starroute /graph /var/cache/numba /srv
COPY --from=build /opt/venv /opt/venv
COPY --from=build --chown=starroute:starroute /var/cache/numba /var/cache/numba
# Named volumes mounted on /graph and /var/cache/numba inherit the ownership above, so the non-root preprocess can
# write them; replicas share compiled numba kernels through the cache volume.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    NUMBA_CACHE_DIR=/var/cache/numba \
    STARROUTE_PORT=5000
WORKDIR /srv
USER starroute
EXPOSE 5000
# start-up measured by bench/startup.py on 2 cores: ~1 s with the shipped kernels, ~25 s when a new CPU recompiles
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('STARROUTE_PORT', '5000'), timeout=2)"]
ENTRYPOINT ["starroute"]
CMD ["serve", "/graph/current", "--host", "0.0.0.0", "--port", "5000", "--workers", "2"]
