"""Predicting a job on hardware nobody probed: GPU facts with their sources (``gpus``: one table
of datasheet figures, and the reader of GPU names as nvidia-smi, clouds and MLPerf write them).

May import: the model's top modules (units, events, pricing) and its stage packages.
"""
