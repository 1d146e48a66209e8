"""The routing engine. Its door is `app.engine.facade.Engine` (typed requests in, seconds and metres out); the
router, the search space, the kernels and guidance sit behind it (docs/DESIGN.md, Layers)."""
