"""What tests and benchmarks share (neither imports the other): servers, starroute's and osrm-routed's; OSRM's peer
binaries and profiles; ASCII maps and traces; the parity oracles against osrm-routed (`python -m harness.osrm_tables`,
`harness.osrm_generated`, `harness.osrm_tags`, ...)."""
