"""An ImageFolder stand-in: ``OUT/train/class<k>/<i>.jpg`` and ``OUT/<VAL_NAME>/class<k>/<i>.jpg``,
ten classes of random-noise JPEGs, SIZE px square - what timm's ``train.py --data-dir`` reads
(its splits are ``train`` and ``validation``) and torchvision's ``ImageFolder``.

    python make_imagefolder.py OUT [TRAIN_PER_CLASS VAL_PER_CLASS SIZE VAL_NAME]
                                    (32 8 160 validation: what timm-train was recorded on)
"""
import os
import sys

import numpy as np
from PIL import Image

out = sys.argv[1]
n_train, n_val, size = (int(a) for a in (sys.argv[2:5] if len(sys.argv) > 4 else (32, 8, 160)))
val_name = sys.argv[5] if len(sys.argv) > 5 else "validation"
rng = np.random.default_rng(0)
for split, n in (("train", n_train), (val_name, n_val)):
    for c in range(10):
        folder = os.path.join(out, split, f"class{c}")
        os.makedirs(folder, exist_ok=True)
        for i in range(n):
            pixels = rng.integers(0, 255, (size, size, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(folder, f"{i}.jpg"))
