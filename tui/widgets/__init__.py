"""The widgets the screens are made of: the ranking table (``ranking``), a probe's panel
(``probe_panel``), a row's detail (``detail``, its memory part ``memory_view``) and a line that
repaints only when its words change (``line``).
"""
