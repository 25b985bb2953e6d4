"""The attention explorer's room: the maps as drawn (maps.py), the page's views (view.py: head, grid, compare,
statistics, ablation, rescale; explain.py; encoder.py), what it opens on (defaults.py), its stable ids (ids.py),
its shareable widgets (specs.py), and the decoding page's step explorer (decoding.py, decoding_specs.py)."""
