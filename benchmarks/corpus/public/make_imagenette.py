"""A stand-in for fastai's Imagenette (``imagenette2-320``: ``train/`` and ``val/``, one folder per
ImageNet class - its ten WordNet ids - of JPEGs whose shorter side is 320 px). The images are
random shapes on noise, SIZE px square (320 by default), so decoding and augmenting cost what the
real ones' do; fastai's ``untar_data(URLs.IMAGENETTE_320)`` returns
``$FASTAI_HOME/data/imagenette2-320`` without downloading where that folder exists.

    python make_imagenette.py OUT_DIR [TRAIN_PER_CLASS] [VAL_PER_CLASS] [SIZE]
"""
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

CLASSES = ("n01440764 n02102040 n02979186 n03000684 n03028079 n03394916 n03417042 n03425413 "
           "n03445777 n03888605").split()


def main():
    out = Path(sys.argv[1])
    train = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    val = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 320
    rng = np.random.default_rng(0)
    for split, n in (("train", train), ("val", val)):
        for k, wnid in enumerate(CLASSES):
            folder = out / split / wnid
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(n):
                pixels = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
                img = Image.fromarray(pixels)
                draw = ImageDraw.Draw(img)
                x, y = rng.integers(0, size // 2, 2)
                colour = tuple(int(c) for c in rng.integers(0, 256, 3))
                (draw.ellipse if k % 2 else draw.rectangle)(
                    [int(x), int(y), int(x) + size // 2, int(y) + size // 2], fill=colour)
                img.save(folder / f"{wnid}_{i}.JPEG", quality=90)
    print("wrote", out)


if __name__ == "__main__":
    main()
