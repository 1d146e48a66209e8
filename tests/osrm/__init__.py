"""OSRM's behaviour: answers against osrm-routed 26.10 and OSRM's own scenarios, guidance, profiles, tags."""
