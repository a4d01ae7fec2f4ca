#!/usr/bin/env bash
# Public training scripts probed and run whole on the lent GPU machine, for the estimate's lean
# (attribution, drift) and the probe's own cost. Two parts, one device call each:
#   PART=1: nanoGPT's own train.py (karpathy/nanoGPT, unchanged) with its shakespeare-char recipe
#           at the recipe's full length (5 000 iterations, evaluation every 250), eager and
#           compiled (nanoGPT's default), each probed with the agent's defaults, then run whole
#   PART=2: the nanoGPT-shaped plain loop, the built-in PyTorch CNN, Lightning and the HF
#           Trainer - probe, whole run under the agent, and (for three of them) the same whole
#           run without probecast: the agent's cost on the job
#   PART=3: the agent as it is now (steps timed by CUDA events, no per-step synchronize): its
#           cost (benchmarks/overhead.py on CUDA), and probes and whole runs in both orders -
#           the plain loop probe/full/probe/full, the others one each way - to tell a probe's
#           mode from its turn when its steps run faster than its whole run's (RESULTS §11)
#   PART=4: three public scripts, each probed first then run whole - the user's order on a fresh
#           host: pytorch/examples word_language_model (the README's "medium" LSTM, 3 epochs;
#           synthetic text of wikitext-2's sizes in .gpu/wlm), minGPT's chargpt (2 000 iterations;
#           synthetic input.txt in .gpu/mingpt), nanoGPT eager (1 500 iterations)
#   PART=5, PART=6: six pytorch/examples scripts (.gpu/pub/pt: mnist, vae, dcgan | siamese_network,
#           mnist_forward_forward, super_resolution), unchanged, at GPU settings, each probed
#           first with the agent's defaults and then run plainly (no agent: the truth a user
#           gets) - benchmarks/public.py's check on a GPU; MNIST (60 000 + 10 000 synthetic) and
#           BSDS300-sized JPEGs made on the device (benchmarks/corpus/public/make_mnist.py, PIL);
#           torchvision from the image, else .gpu/pub/site (the 0.28.0 wheel: torch 2.13 only);
#           PART=56: both lists in one call (benchmarks/corpus/runs-gpu-h200-public)
#   PART=7: the agent's turn against the host's - mnist and vae alternating plain, probe and
#           whole runs under the agent; forward-forward probed again (the next lent GPU's check)
# DEADLINE (epoch seconds): the device call's end - no job runs past it (lib.sh), no pair starts
#   with under 60 s left; pack $OUT into one tar after it
# Needs .gpu/ (ignored by git, carried to the device): the agent's zipapp and the public scripts
# with synthetic data - benchmarks/gpu/prepare.sh lays it all out from the three repositories'
# git directories (the device cannot download). DEV=cpu runs the same plan tiny, here, to check
# the script: PATH=$PWD/.venv/bin:$PATH DEADLINE=... DEV=cpu OUT=/tmp/o PART=7 (PART=7: 2 min).
set -u
GN=0
OUT=${OUT:-/tmp/gpu-out}; DEV=${DEV:-cuda}; PART=${PART:-1}; mkdir -p "$OUT"
AG="python3 $PWD/.gpu/probecast-agent.pyz"
S=$PWD/benchmarks/corpus/scripts
. "$(dirname "$0")/lib.sh"
INSTANCE=${INSTANCE:-gpu-h100}
if [ "$DEV" = cuda ]; then
  NANO=""; GPT="--device=cuda --dtype=bfloat16 --n_layer=6 --n_head=6 --n_embd=384 --block_size=256 --max_iters=800 --eval_interval=200 --eval_iters=20 --lr_decay_iters=800"
  CNN="--train-size 400000 --val-size 20000 --epochs 3"; SAMPLES=60000; HFS=40000; EP=3; T=120
  SHORT="--max_iters=1500 --lr_decay_iters=1500"; OSTEPS=1500; WSIZE=650; WEP=3; CIT=2000
  gpu_watch
else
  NANO="--device=cpu --dtype=float32 --n_layer=1 --n_head=2 --n_embd=32 --block_size=32 --batch_size=8 --max_iters=40 --lr_decay_iters=40 --eval_interval=20 --eval_iters=2"
  GPT="--device=cpu --n_layer=2 --n_head=2 --n_embd=32 --block_size=32 --max_iters=60 --eval_interval=20 --eval_iters=2 --lr_decay_iters=60"
  CNN="--train-size 2000 --val-size 500 --epochs 2"; SAMPLES=600; HFS=300; EP=2; T=120
  SHORT=""; OSTEPS=20; WSIZE=16; WEP=1; CIT=40
fi
if [ "$PART" = 5 ] || [ "$PART" = 6 ] || [ "$PART" = 56 ] || [ "$PART" = 7 ]; then
  P=$PWD/.gpu/pub
  python3 -c "import torchvision" 2> /dev/null || export PYTHONPATH=$P/site
  if [ "$DEV" = cuda ]; then
    NTRAIN=60000; NTEST=10000; EPM=5; EPV=10; NITER=25; EPS=5; FFE=2000; FFN=50000; SRE=30; ACC=""
  else
    NTRAIN=2000; NTEST=500; EPM=1; EPV=1; NITER=1; EPS=1; FFE=20; FFN=1000; SRE=1; ACC="--no-accel"
  fi
  [ -f "$P/data/MNIST/raw/train-labels-idx1-ubyte" ] || python3 "$PWD/benchmarks/corpus/public/make_mnist.py" "$P/data/MNIST/raw" $NTRAIN $NTEST
  ln -sfn ../data "$P/pt/data"; ln -sfn ../../data "$P/pt/mnist_forward_forward/data"
  python3 - "$P/pt/super_resolution/dataset/BSDS300/images" <<'PY'
import sys, numpy as np
from pathlib import Path
from PIL import Image
rng = np.random.default_rng(0)
for part, n in (("train", 200), ("test", 100)):
    d = Path(sys.argv[1]) / part; d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        if not (d / f"{i}.jpg").exists():
            Image.fromarray(rng.integers(0, 255, (321, 481, 3), dtype=np.uint8)).save(d / f"{i}.jpg")
PY
  BS=64; T=240
  pub() {  # pub NAME FOLDER ARGS...: probed first, then run plainly
    local name=$1; cd "$P/pt/$2" || return; shift 2
    if [ -n "${DEADLINE:-}" ] && [ $((DEADLINE - $(date +%s))) -lt 60 ]; then
      echo "$name skipped: under 60 s left" | tee -a "$OUT/jobs.txt"; cd - > /dev/null; return
    fi
    LABEL=$name; job "$name" probe -- python3 main.py "$@"; job "$name-plain" plain -- python3 main.py "$@"
    cd - > /dev/null || exit 1
  }
  # PART=56: both lists in one call, the shortest and most telling first, under DEADLINE
  five() {
    pub pt-mnist mnist --epochs $EPM $ACC
    pub pt-vae vae --epochs $EPV $ACC
    pub pt-dcgan dcgan --dataset fake --niter $NITER $([ "$DEV" = cuda ] && echo --accel)
  }
  six() {
    pub pt-super_resolution super_resolution --upscale_factor 3 --batchSize 4 --testBatchSize 100 --nEpochs $SRE --lr 0.001 $([ "$DEV" = cuda ] && echo --accel)
    pub pt-siamese siamese_network --epochs $EPS $ACC
    pub pt-forward_forward mnist_forward_forward --epochs $FFE --train_size $FFN --test_size 1000 $([ "$DEV" = cpu ] && echo --no_accel)
  }
  # PART=7: is a probed job's slower step the agent's or the host's turn? (runs-gpu-h200-public:
  # every probe ran first, and its steps were 8-17 % slower than the plain run after it, which a
  # repeat minutes later ran 11-19 % faster still.) mnist alternates plain, probe, plain, whole
  # run under the agent (--full), plain; vae the same from a probe; forward-forward probed again
  # with a full batch drawn once read as no epoch (328e028)
  seven() {
    local e3=$([ "$DEV" = cuda ] && echo 3 || echo 1)
    cd "$P/pt/mnist" || return; LABEL=pt-mnist
    for k in plain probe plain full plain; do job "pt-mnist-$k-$((++GN))" $k -- python3 main.py --epochs $e3 $ACC; done
    cd "$P/pt/vae" || return; LABEL=pt-vae
    for k in probe plain full plain; do job "pt-vae-$k-$((++GN))" $k -- python3 main.py --epochs $((e3 * 2)) $ACC; done
    cd - > /dev/null || exit 1
    pub pt-forward_forward mnist_forward_forward --epochs $FFE --train_size $FFN --test_size 1000 $([ "$DEV" = cpu ] && echo --no_accel)
  }
  case $PART in 5) five ;; 6) six ;; 7) seven ;; *) five; six ;; esac
elif [ "$PART" = 4 ]; then
  cd .gpu/wlm || exit 1
  LABEL=word_language_model_medium; BS=20
  W=(python3 main.py --accel --emsize $WSIZE --nhid $WSIZE --dropout 0.5 --epochs $WEP)
  job wlm-medium probe -- "${W[@]}"; job wlm-medium full -- "${W[@]}"
  cd ../mingpt || exit 1
  LABEL=mingpt_chargpt; BS=64
  C=(python3 chargpt.py --trainer.max_iters=$CIT)
  job chargpt probe -- "${C[@]}"; job chargpt full -- "${C[@]}"
  cd ../nanogpt || exit 1
  LABEL=nanogpt_shakespeare_char_1500; BS=64
  N=(python3 train.py config/train_shakespeare_char.py --compile=False $NANO $SHORT)
  job nanogpt-eager-1500-b probe -- "${N[@]}"; job nanogpt-eager-1500-b full -- "${N[@]}"
  cd ../.. || exit 1
elif [ "$PART" = 3 ]; then
  mkdir -p /tmp/pp && ln -sfn "$PWD" /tmp/pp/probecast
  PYTHONPATH=/tmp/pp timeout 150 python3 benchmarks/overhead.py --device "$DEV" --steps "$OSTEPS" \
    --reps 3 --variants plain agent --no-client --json "$OUT/overhead.json" > "$OUT/overhead.txt" 2>&1
  echo "overhead rc=$?" | tee -a "$OUT/jobs.txt"
  LABEL=gpt_loop; BS=64
  for kind in probe full probe full; do
    job gpt-b64-$kind-$((++GN)) "$kind" -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=64
  done
  LABEL=lightning_cnn; BS=256
  L=(python3 $S/lightning_cnn.py --device $DEV --batch-size 256 --samples $SAMPLES --epochs $EP)
  job lightning-b256 full -- "${L[@]}"; job lightning-b256 probe -- "${L[@]}"
  LABEL=hf_trainer; BS=64
  H=(python3 $S/hf_trainer.py --device $DEV --batch-size 64 --samples $HFS --epochs $EP)
  job hf-b64 full -- "${H[@]}"; job hf-b64 probe -- "${H[@]}"
  cd .gpu/nanogpt || exit 1
  LABEL=nanogpt_shakespeare_char_1500; BS=64
  N=(python3 train.py config/train_shakespeare_char.py --compile=False $NANO $SHORT)
  job nanogpt-eager-1500 probe -- "${N[@]}"; job nanogpt-eager-1500 full -- "${N[@]}"
  job nanogpt-eager-1500-plain plain -- "${N[@]}"
  LABEL=nanogpt_shakespeare_char_compile_1500
  N=(python3 train.py config/train_shakespeare_char.py $NANO $SHORT)
  job nanogpt-compile-1500 full -- "${N[@]}"; job nanogpt-compile-1500 probe -- "${N[@]}"
  cd - > /dev/null
elif [ "$PART" = 1 ]; then
  cd .gpu/nanogpt || exit 1
  LABEL=nanogpt_shakespeare_char; BS=64
  job nanogpt-eager-b64 probe -- python3 train.py config/train_shakespeare_char.py --compile=False $NANO
  job nanogpt-eager-b64 full -- python3 train.py config/train_shakespeare_char.py --compile=False $NANO
  LABEL=nanogpt_shakespeare_char_compile
  job nanogpt-compile-b64 probe -- python3 train.py config/train_shakespeare_char.py $NANO
  job nanogpt-compile-b64 full -- python3 train.py config/train_shakespeare_char.py $NANO
  cd - > /dev/null
else
  LABEL=gpt_loop; BS=64
  job gpt-b64 probe -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=64
  job gpt-b64 full -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=64
  job gpt-b64-plain plain -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=64
  LABEL=torch-cnn; BS=512
  job cnn-b512 probe -- WORKLOAD torch-cnn --batch-size 512 $CNN
  job cnn-b512 full -- WORKLOAD torch-cnn --batch-size 512 $CNN
  LABEL=lightning_cnn; BS=256
  L=(python3 $S/lightning_cnn.py --device $DEV --batch-size 256 --samples $SAMPLES --epochs $EP)
  job lightning-b256 probe -- "${L[@]}"; job lightning-b256 full -- "${L[@]}"
  job lightning-b256-plain plain -- "${L[@]}"
  LABEL=hf_trainer; BS=64
  H=(python3 $S/hf_trainer.py --device $DEV --batch-size 64 --samples $HFS --epochs $EP)
  job hf-b64 probe -- "${H[@]}"; job hf-b64 full -- "${H[@]}"; job hf-b64-plain plain -- "${H[@]}"
fi
[ -n "${SMI:-}" ] && kill "$SMI"
exit 0
