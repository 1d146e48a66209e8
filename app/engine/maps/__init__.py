"""The map: the road network, OSRM's debug graph and the background cut into web-map tiles."""
