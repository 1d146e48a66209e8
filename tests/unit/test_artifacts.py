"""The in-memory graph (`floor.format.graph.Graph`): its arrays are attributes, whatever changes the mapping."""

from __future__ import annotations

import numpy as np
import pytest

from floor.format.graph import graph_in_memory


def test_arrays_are_attributes_through_every_change() -> None:
    a, b, c = np.arange(3), np.arange(4), np.arange(5)
    g = graph_in_memory({"first_out": a, "path": b})
    assert g.first_out is a
    assert g.path is not b  # a name the graph itself uses stays the graph's
    assert g.arrays["path"] is b
    g.arrays["first_out"] = c  # replaced in place (as `freeze` does)
    assert g.first_out is c
    g.arrays.update({"arc_head": a}, extra=b)
    assert g.arc_head is a and g.extra is b
    g.arrays |= {"more": c}
    assert g.more is c
    assert g.arrays.setdefault("more", a) is c and g.arrays.setdefault("other", a) is a and g.other is a
    assert g.arrays.pop("extra") is b
    del g.arrays["more"]
    for gone in ("extra", "more"):
        with pytest.raises(AttributeError):
            getattr(g, gone)
    g.arrays.clear()
    with pytest.raises(AttributeError):
        g.first_out  # noqa: B018
    assert g.has("first_out") is False and isinstance(g.arrays, dict)


def test_strings_are_decoded_once_and_follow_the_table() -> None:
    def table(*names: str) -> dict[str, np.ndarray]:
        raw = [n.encode() for n in ("", *names)]
        off = np.cumsum([0, *(len(r) for r in raw)]).astype(np.int64)
        return {"str_offsets": off, "str_bytes": np.frombuffer(b"".join(raw), dtype=np.uint8)}

    g = graph_in_memory(table("Rua Álvares", "A1"))
    assert [g.string(i) for i in range(3)] == ["", "Rua Álvares", "A1"]
    assert g.string(1) is g.string(1)  # decoded once
    g.arrays.update(table("Avenida", "N2"))
    assert g.string(1) == "Avenida" and g.string(2) == "N2"
