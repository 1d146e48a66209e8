"""The graph-directory format, owned here alone: the array table, the manifest, loading and saving, the checks that
guard it, units and on-disk codes, the encoded values and OSRM's road classification stored per arc."""
