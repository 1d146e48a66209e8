"""OSRM's intersection model (its `extractor/intersection/`): the graph its compressor leaves (`graph`), the
coordinate extractor (`coordinates`), the mergeable-road detector (`merge`, `walker`) and the intersection views with
their perceived turn angles (`intersection_analysis`, `intersection`), in OSRM's fixed-point arithmetic (`geo`).

Two readers: the turn stage prices turns by the views (`preprocessing.turns.osrm_turn_views`: through their numba
kernels, `views` over `geo_kernels`, bit-identical to the Python model, which still gives the junctions where roads
may merge), guidance classifies them (`app.engine.guidance`).
"""
