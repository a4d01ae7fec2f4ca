"""A stand-in for the UCI Adult census CSV fastai's ADULT_SAMPLE holds (``adult.csv``: 32 561
rows, its 15 columns - six categorical ones of the real categories, a few values missing as in
the real file - their kinds and ranges; the values random, the salary loosely tied to two of them
so the loss falls). fastai's ``untar_data(URLs.ADULT_SAMPLE)`` returns ``$FASTAI_HOME/data/
adult_sample`` without downloading where that folder exists.

    python make_adult.py OUT.csv [ROWS]
"""
import sys

import numpy as np

rows = int(sys.argv[2]) if len(sys.argv) > 2 else 32561
rng = np.random.default_rng(0)
CATS = {
    "workclass": "Private Self-emp-not-inc Self-emp-inc Federal-gov Local-gov State-gov Without-pay",
    "education": "Bachelors Some-college 11th HS-grad Prof-school Assoc-acdm Assoc-voc 9th 7th-8th "
                 "12th Masters 1st-4th 10th Doctorate 5th-6th Preschool",
    "marital-status": "Married-civ-spouse Divorced Never-married Separated Widowed "
                      "Married-spouse-absent Married-AF-spouse",
    "occupation": "Tech-support Craft-repair Other-service Sales Exec-managerial Prof-specialty "
                  "Handlers-cleaners Machine-op-inspct Adm-clerical Farming-fishing "
                  "Transport-moving Priv-house-serv Protective-serv Armed-Forces",
    "relationship": "Wife Own-child Husband Not-in-family Other-relative Unmarried",
    "race": "White Asian-Pac-Islander Amer-Indian-Eskimo Other Black",
    "sex": "Female Male",
    "native-country": "United-States Mexico Philippines Germany Canada India England Cuba",
}
cols = {
    "age": rng.integers(17, 91, rows).astype(str),
    "workclass": None, "fnlwgt": rng.integers(12285, 1484706, rows).astype(str),
    "education": None, "education-num": rng.integers(1, 17, rows).astype(float).astype(str),
    "marital-status": None, "occupation": None, "relationship": None, "race": None, "sex": None,
    "capital-gain": rng.choice([0, 0, 0, 0, 2174, 14084, 5178], rows).astype(str),
    "capital-loss": rng.choice([0, 0, 0, 0, 0, 1902, 1740], rows).astype(str),
    "hours-per-week": rng.integers(1, 100, rows).astype(str), "native-country": None,
}
for name, values in CATS.items():
    col = rng.choice(values.split(), rows).astype(object)
    col[rng.random(rows) < 0.01] = ""  # missing, as the real file's " ?" read by fastai
    cols[name] = col
cols["education-num"][rng.random(rows) < 0.01] = ""
rich = (cols["marital-status"] == "Married-civ-spouse") & (rng.random(rows) < 0.6)
salary = np.where(rich ^ (rng.random(rows) < 0.1), ">=50k", "<50k")
with open(sys.argv[1], "w") as fh:
    fh.write(",".join([*cols, "salary"]) + "\n")
    for i in range(rows):
        fh.write(",".join([*(str(v[i]) for v in cols.values()), salary[i]]) + "\n")
