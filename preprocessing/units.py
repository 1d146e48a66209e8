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
