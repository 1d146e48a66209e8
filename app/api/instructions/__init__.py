"""Spoken-language text instructions for route steps, from osrm-text-instructions' phrase data (`compile`)."""
