"""Synthetic stand-in for CelebA's aligned-and-cropped images, in the folder layout torchvision's
CelebA reads them from: OUT_ROOT/celeba/img_align_celeba/000001.jpg, 000002.jpg, ...
(178x218 RGB JPEGs, like img_align_celeba.zip once extracted). Each image is a face-like drawing:
a coloured background gradient, hair, an elliptical skin-toned face roughly centred (as in the
aligned set), eyes, brows, nose and mouth, with random tones, sizes and small offsets, plus noise.
Deterministic (seed 0). The CelebA annotation .txt files are not written (see NOTES.md).

    python make_celeba.py OUT_ROOT N_IMAGES
"""
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

out = Path(sys.argv[1]) / "celeba" / "img_align_celeba"
out.mkdir(parents=True, exist_ok=True)
n = int(sys.argv[2])
rng = np.random.default_rng(0)
W, H = 178, 218
yy = np.linspace(0, 1, H)[:, None, None]

for k in range(1, n + 1):
    c0, c1 = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    bg = (c0 * (1 - yy) + c1 * yy) * np.ones((1, W, 1))
    img = Image.fromarray(bg.astype(np.uint8))
    d = ImageDraw.Draw(img)
    cx, cy = W // 2 + int(rng.integers(-6, 7)), 120 + int(rng.integers(-6, 7))
    fw, fh = int(rng.integers(44, 58)), int(rng.integers(58, 72))
    hair = tuple(int(v) for v in rng.integers(10, 120, 3))
    skin = tuple(int(v) for v in (np.array([225, 180, 150]) * rng.uniform(0.55, 1.1)).clip(0, 255))
    d.ellipse([cx - fw - 8, cy - fh - 22, cx + fw + 8, cy + fh - 10], fill=hair)  # hair
    d.ellipse([cx - fw, cy - fh, cx + fw, cy + fh], fill=skin)  # face
    ey, ex = cy - 12, int(rng.integers(17, 23))
    for s in (-1, 1):
        d.ellipse([cx + s * ex - 7, ey - 4, cx + s * ex + 7, ey + 4], fill=(245, 245, 245))
        d.ellipse([cx + s * ex - 3, ey - 3, cx + s * ex + 3, ey + 3], fill=(40, 30, 20))
        d.line([cx + s * ex - 9, ey - 11, cx + s * ex + 9, ey - 12], fill=hair, width=3)
    d.line([cx, ey + 2, cx - 3, cy + 14, cx + 3, cy + 16], fill=tuple(int(v * 0.8) for v in skin), width=2)
    mw, my = int(rng.integers(12, 20)), cy + 32
    d.chord([cx - mw, my - 6, cx + mw, my + 8], 0, 180, fill=(150, 60, 60))
    img = img.filter(ImageFilter.GaussianBlur(1.0))
    arr = np.asarray(img).astype(np.int16) + rng.integers(-6, 7, (H, W, 3))
    Image.fromarray(arr.clip(0, 255).astype(np.uint8)).save(out / f"{k:06d}.jpg", quality=90)
print("wrote", n, "images to", out)
