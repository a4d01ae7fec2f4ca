#!/usr/bin/env bash
# Lay out .gpu/ (ignored by git; `run`'s carry takes it to the lent device) for record_h100.sh,
# from git directories of the three public repositories the recordings use - a session's `fetch`
# brings each one (/work/.mirror/OWNER+NAME/repo):
#
#   bash benchmarks/gpu/prepare.sh EXAMPLES_GIT NANOGPT_GIT MINGPT_GIT [--site]
#
#   .gpu/probecast-agent.pyz  the agent as committed here (core/agent/bundle.py's zipapp)
#   .gpu/pub/pt/NAME/         pytorch/examples @ 77f55b91: mnist, vae, dcgan, siamese_network,
#                             mnist_forward_forward, super_resolution (PART=5/6/56/7; their data
#                             are made on the device: MNIST's files, BSDS300-sized JPEGs)
#   .gpu/wlm/                 its word_language_model with wikitext-2 of synthetic words at the
#                             real split sizes (33 278 words; 2.09 M / 218 k / 246 k tokens: PART=4)
#   .gpu/nanogpt/             karpathy/nanoGPT @ 3adf61e1 (train.py, model.py, configurator.py,
#                             config/) with data/shakespeare_char/{train,val}.bin, meta.pkl from its
#                             own prepare.py over a synthetic input.txt of tiny-shakespeare's size
#                             (1 115 394 characters: PART=1/3/4)
#   .gpu/mingpt/              karpathy/minGPT @ 37baab71: mingpt/ and chargpt.py, with the same
#                             input.txt (PART=4)
#   --site: torchvision 0.28.0 without its dependencies in .gpu/pub/site, its compiled ops'
#           registration made optional (PyPI's build needs CUDA's torch) - for a DEV=cpu check of
#           the public parts here; the device's image has its own torchvision.
#
# Then: DEV=cpu OUT=/tmp/o PART=7 bash benchmarks/gpu/record_h100.sh (tiny, minutes) checks it;
# on the device, see record_h100.sh's header. Under 64 MiB in all (run's carry limit).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { sed -n 2,25p "$0"; exit 2; }
EX=$1 NANO=$2 MIN=$3 SITE=${4:-}
PY=.venv/bin/python
G=.gpu
mkdir -p "$G/pub/pt" "$G/wlm" "$G/nanogpt" "$G/mingpt"
$PY -c "from probecast.core.agent.bundle import build_zipapp; build_zipapp('$G/probecast-agent.pyz')"

for d in mnist vae dcgan siamese_network mnist_forward_forward super_resolution; do  # (a subtree
    git --git-dir="$EX" archive --prefix="$d/" "77f55b91:$d" | tar -x -C "$G/pub/pt"  # each: the
done                                                              # snapshot lacks wlm's data)
for f in main.py data.py model.py; do  # (its data are not in the snapshot)
    git --git-dir="$EX" show "77f55b91:word_language_model/$f" > "$G/wlm/$f"
done
mkdir -p "$G/wlm/data/wikitext-2"
for split in "train 2088628" "valid 217646" "test 245569"; do
    set -- $split
    [ -s "$G/wlm/data/wikitext-2/$1.txt" ] || $PY benchmarks/corpus/public/make_wikitext2.py \
        "$G/wlm/data/wikitext-2/$1.txt" "$2" 33278 > /dev/null
done

git --git-dir="$NANO" archive 3adf61e1 train.py model.py configurator.py config \
    data/shakespeare_char/prepare.py | tar -x -C "$G/nanogpt"
D=$G/nanogpt/data/shakespeare_char
[ -s "$D/input.txt" ] || $PY benchmarks/corpus/public/make_play.py "$D/input.txt" 1115394
[ -s "$D/meta.pkl" ] || (cd "$D" && ../../../../$PY prepare.py > /dev/null)

git --git-dir="$MIN" archive 37baab71 mingpt projects/chargpt/chargpt.py | tar -x -C "$G/mingpt"
mv -f "$G/mingpt/projects/chargpt/chargpt.py" "$G/mingpt/chargpt.py" && rm -rf "$G/mingpt/projects"
cp "$D/input.txt" "$G/mingpt/input.txt"

if [ "$SITE" = --site ] && ! [ -d "$G/pub/site/torchvision" ]; then
    $PY -m pip install -q --no-deps --target "$G/pub/site" torchvision==0.28.0
    # the CUDA build's C ops cannot register beside a CPU torch; nothing these examples call
    # uses them (nms, roi_align)
    $PY - "$G/pub/site/torchvision/__init__.py" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
old = "from torchvision import (\n    _autograd_registrations,\n    _meta_registrations,\n"
assert old in s, "torchvision's __init__ changed: make its registrations optional by hand"
s = s.replace(old, "try:\n    from torchvision import _autograd_registrations, _meta_registrations\n"
                   "except RuntimeError:\n    pass\nfrom torchvision import (\n")
open(p, "w").write(s)
EOF
fi
du -sh "$G" | sed 's/^/.gpu: /'
