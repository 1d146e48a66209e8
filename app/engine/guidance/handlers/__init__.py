"""OSRM's turn handlers, one module each (`turns` dispatches): which instruction each junction of a leg gets."""
