"""Reports: a ranking turned into text (``table``, ``fmt``), memory in words (``memory_text``),
CSV/JSON/Markdown (``export``), chart data shared by the app and the figures (``charts``) and
PNG/SVG figures (``figures``).

May import: model. Imported by: cli, the TUI.
"""
