"""Units, fixed-point scales, sentinels and on-disk codes shared by every stage and the engine (one place each).

The format (`floor.format.arrays`) says which array holds which unit; the codes here (`arc_flags` bits,
`arc_class` road classes) are stored on disk, so they are append-only.
"""

COORD_SCALE = 10_000_000  # int32 coordinates in 1e-7 degrees (OSM's own precision)
WEIGHT_PER_SECOND = 10  # weights and durations in deciseconds
DIST_PER_METRE = 10  # distances in decimetres
EARTH_RADIUS_M = 6_371_008.8  # mean Earth radius (IUGG): the great-circle *bounds* (A*/ALT, snapping radii, matching)
# Reported distances are OSRM's (`floor.kernels.geometry.osrm_distance_m`): coordinates rounded to 1e-6 degrees, then
# mapbox's cheap ruler on the WGS84 ellipsoid, one ruler per 0.05-degree latitude band of the pair's mean latitude.
OSRM_COORD_SCALE = 1_000_000  # OSRM's COORDINATE_PRECISION: FixedPointCoordinate in 1e-6 degrees
WGS84_A_KM = 6378.137  # equatorial radius (cheap ruler's RE)
WGS84_F = 1.0 / 298.257223563  # flattening (cheap ruler's FE)
OSRM_RULER_BANDS = 1800  # OSRM's CheapRulerContainer: 1800 rulers over 0..90 degrees
INF_WEIGHT = 1 << 60  # int64 search sentinel (ds or dm): INF + INF does not overflow
CLOSED_DS = 1 << 26  # int32 weight of a road closed by a speed file (0 km/h): 77 days, above any real route; a
# path weighing at least this is no path (sums of a few fit in int32)
LM_NONE = 0xFFFFFFFF  # uint32 landmark-distance sentinel: the pair is unreachable, no bound
# Departure time (time profiles, `td_*` arrays): week time in ds since Monday 00:00 local time of the graph, in 672
# slots of 15 minutes; a slot's travel-time factor (taken at its midpoint, linear between midpoints, wrapping around
# the week) in 1/TD_ONE units: TD_ONE = free flow, round(TD_ONE * 100 / pct) for a speed of pct % of free flow
WEEK_DS = 7 * 86400 * WEIGHT_PER_SECOND  # 6_048_000
SLOT_DS = 9000  # 15 minutes
SLOTS_PER_DAY = 96
SLOTS = 7 * SLOTS_PER_DAY  # 672
TD_ONE = 65536  # factor 1.0 (free flow)
TD_PCT_MIN = 1  # percent of free flow a time profile may give
TD_PCT_MAX = 200
TD_FACTOR_MIN = round(TD_ONE * 100 / TD_PCT_MAX)  # 32768: twice free flow
TD_FACTOR_MAX = TD_ONE * 100 // TD_PCT_MIN  # 6_553_600: a hundredth of free flow

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
# per node (`node_flags`): OSRM's graph compressor removes the node (two compatible roads: no turn is taken there and
# guidance sees no intersection); a turning obstacle (`highway=turning_circle`, `turning_loop`, `mini_roundabout`),
# which OSRM keeps and where it allows u-turns
NODE_COMPRESSED = 1
NODE_TURNING = 2
# car.lua's conditional stop signs at the node (`profiles.base.NodeResult`), for the turns passing it: `stop=minor`,
# and a stop sign with no direction (the 20 m rule)
NODE_MINOR_STOP = 4
NODE_SHORT_LEG_STOP = 8

# Road class codes stored per arc (`arc_class`); the index is the code. Append only: codes are on disk.
ROAD_CLASSES: tuple[str, ...] = (
    "other",
    "motorway",
    "motorway_link",
    "trunk",
    "trunk_link",
    "primary",
    "primary_link",
    "secondary",
    "secondary_link",
    "tertiary",
    "tertiary_link",
    "unclassified",
    "residential",
    "living_street",
    "service",
    "track",
    "road",
    "path",
    "footway",
    "cycleway",
    "bridleway",
    "pedestrian",
    "steps",
    "ferry",
    "shuttle_train",
    "movable_bridge",
    "platform",
    "corridor",
    "busway",
)
ROAD_CLASS_CODE: dict[str, int] = {name: i for i, name in enumerate(ROAD_CLASSES)}

# Travel mode codes stored per arc (`arc_mode`): OSRM's `TravelMode`, the profile's name for the mode of the arc's
# direction (`WayResult.forward_mode` / `backward_mode`); the index is the code. Append only: codes are on disk.
TRAVEL_MODES: tuple[str, ...] = (
    "inaccessible",
    "driving",
    "cycling",
    "walking",
    "ferry",
    "train",
    "pushing_bike",
    "steps_up",
    "steps_down",
    "river_up",
    "river_down",
    "route",
)
TRAVEL_MODE_CODE: dict[str, int] = {name: i for i, name in enumerate(TRAVEL_MODES)}
# A mode as OSRM's API says it (a step's `mode`, `travelModeToString`), per code
OSRM_MODE_NAMES: tuple[str, ...] = (
    "inaccessible",
    "driving",
    "cycling",
    "walking",
    "ferry",
    "train",
    "pushing bike",
    "steps up",
    "steps down",
    "river upstream",
    "river downstream",
    "route",
)

# `man_seq` (preprocessing.osm.maneuvers): maneuver overrides packed as records `k, instruction node, type, direction,
# arc_0 .. arc_k-1`; a type or direction MAN_KEEP leaves the step's own
MAN_HEADER = 4
MAN_KEEP = -1
