"""Predicting a job on hardware nobody probed.

``gpus`` (GPU facts with their sources, and GPU names read as nvidia-smi, clouds and MLPerf write
them), ``model`` (a job's total time on a candidate from its times on other hardware, with
bounds), ``predicted`` (those candidates as ranked rows beside the probed ones, ``rank
--predict``) and ``plan`` (which candidates to probe, which to predict).

May import: the model's top modules (units, events, pricing, rows) and its stage packages.
"""
