"""Access, barrier and oneway rules beside osrm-routed (`harness/osrm_tags.py`), on the tag combinations where the
profiles were brought to osrm-backend 26.10's Lua this far: motorroads closed to bicycles and walkers, a
`proposed=*` upgrade of a real road still open, an audible (virtual) fence passed, foot.lua's carriageway whose
sidewalk is its own way (`sidewalk*=separate`, reopened by a foot access tag), escalators (`conveying`), no
`highway=road` or `leisure=track` on foot, `use_sidepath`. The benchmark runs every combination (113, car, bike and
foot: all agree). Skipped with the reason where osrm-bindings cannot be installed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from harness import osrm_tags as ot

FIXED = [
    ot.way(highway="primary", motorroad="yes"),
    ot.way(highway="tertiary", proposed="secondary"),
    ot.way(highway="proposed"),
    ot.way(highway="road"),
    ot.way(leisure="track"),
    ot.way(highway="primary", foot="use_sidepath"),
    ot.way(highway="primary", bicycle="use_sidepath"),
    ot.way(highway="residential", sidewalk="separate"),
    ot.way(highway="residential", sidewalk="separate", foot="yes"),
    ot.way(highway="residential", **{"sidewalk:left": "separate", "foot:forward": "yes"}),
    ot.way(highway="steps", conveying="forward"),
    ot.way(highway="footway", conveying="backward"),
    ot.way(highway="steps", conveying="forward", oneway="no"),
    ot.node(barrier="fence", sensory="audible"),
    ot.node(barrier="fence", sensory="audio"),
    ot.node(barrier="fence"),
    ot.node(barrier="bollard", bollard="rising"),
]


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["bike", "foot"])
def test_tag_rules_agree_with_osrm(profile: str, tmp_path: Path) -> None:
    from harness.osrm_peer import ensure_osrm

    bin_dir = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    if bin_dir is None:
        pytest.skip("osrm-bindings (osrm-routed) cannot be installed here")
    answers = ot.run(profile, FIXED, bin_dir, tmp_path)
    off = [(a.direction, a.case.label(), a.ours, a.theirs) for a in answers if not a.agree]
    assert not off, off
    # the fixed cases are not all closed or all open: both kinds of answer are held
    assert {"Ok", "NoSegment"} <= {a.ours[0] for a in answers}
