"""Tests through a real server (or the ASGI app): the HTTP APIs, the map page, start-up, processes, deployment."""
