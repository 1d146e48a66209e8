"""Units, fixed-point scales and sentinels shared by every stage (one place, explicit names)."""

COORD_SCALE = 10_000_000  # int32 coordinates in 1e-7 degrees (OSM's own precision)
WEIGHT_PER_SECOND = 10  # weights and durations in deciseconds
DIST_PER_METRE = 10  # distances in decimetres
EARTH_RADIUS_M = 6_371_008.8  # mean Earth radius (IUGG), used for great-circle distances everywhere
INVALID_ID = -1
INF_WEIGHT = 1 << 60  # int64 search sentinel: INF + INF does not overflow

FLAG_FERRY = 1
FLAG_ROUNDABOUT = 2
FLAG_TOLL = 4
FLAG_RESTRICTED = 8
FLAG_MOTORWAY = 16
# guidance only, nothing routes on them: a tunnel (OSRM's "tunnel" class), `junction=circular` (a rotary whatever its
# size), a split way (OSRM's `is_split`: a two-way way whose directions differ in speed, mode, turn lanes or classes;
# OSRM keeps its directions apart, so its ends are never compressed into a neighbouring way)
FLAG_TUNNEL = 32
FLAG_CIRCULAR = 64
FLAG_SPLIT = 128
