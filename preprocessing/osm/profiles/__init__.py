"""Routing profiles (car, bike, foot, testbot) as plain modules with OSRM's semantics."""

from __future__ import annotations

import importlib
from types import ModuleType

PROFILES = ("car", "bike", "foot", "testbot")


class UnknownProfile(ValueError):
    pass


def get_profile(name: str) -> ModuleType:
    """The profile module called `name`; raises UnknownProfile with the list of known ones."""
    if name not in PROFILES:
        raise UnknownProfile(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}")
    return importlib.import_module(f"preprocessing.osm.profiles.{name}")
