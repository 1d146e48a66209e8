"""Schemathesis against the app's own OpenAPI schema, on a real server: whatever the input, never a 5xx.

Every documented operation (native and OSRM) gets generated requests; statuses, content types and bodies must also
match what the schema documents. Hypothesis examples are kept few per operation so the run stays short on 2 cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from harness import api_server


@pytest.fixture(scope="session")
def api_schema(bundled_graph: Path):
    base = api_server.shared(bundled_graph)
    return schemathesis.openapi.from_url(f"{base}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_errors(case) -> None:
    case.call_and_validate(
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
        timeout=30,
    )
