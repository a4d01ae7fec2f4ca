#!/usr/bin/env bash
# Real GPU probes and full runs , in one call on the lent accelerator machine:
#   run: bash benchmarks/gpu/record.sh            (needs .gpu/probecast-agent.pyz, built here by
#        python -c "from probecast.core.agent.bundle import build_zipapp; build_zipapp('.gpu/probecast-agent.pyz')")
# Each job writes its probecast log (and the program's output) under $OUT/<name>/; nvidia-smi
# samples the GPU every 500 ms beside them (NVML through the agent vs nvidia-smi). Every job has
# its own timeout: one that fails or overruns never stops the others. DEV=cpu runs the same
# plan tiny, here, to check the script.
set -u
OUT=${OUT:-/tmp/gpu-out}; DEV=${DEV:-cuda}; mkdir -p "$OUT"
AG="python3 $PWD/.gpu/probecast-agent.pyz"
S=benchmarks/corpus/scripts
. "$(dirname "$0")/lib.sh"
if [ "$DEV" = cuda ]; then
  GPT="--device=cuda --dtype=bfloat16 --n_layer=6 --n_head=6 --n_embd=384 --block_size=256 --max_iters=800 --eval_interval=200 --eval_iters=20 --lr_decay_iters=800"
  CNN="--train-size 400000 --val-size 20000 --epochs 3"; SAMPLES=60000; HFS=40000; EP=3; T=90
  gpu_watch
else
  GPT="--device=cpu --n_layer=2 --n_head=2 --n_embd=32 --block_size=32 --max_iters=60 --eval_interval=20 --eval_iters=2 --lr_decay_iters=60"
  CNN="--train-size 2000 --val-size 500 --epochs 2"; SAMPLES=600; HFS=300; EP=2; T=120
fi
INSTANCE=${INSTANCE:-gpu-h200}
# 1. a step-budgeted GPT-style loop (nanoGPT's shape, evaluation every 200 iterations), 2 batch sizes
LABEL=gpt_loop
for BS in 32 64; do
  job gpt-b$BS probe -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=$BS
  job gpt-b$BS full -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=$BS
done
# 2. the hook's overhead: the same full run without the agent (wall time only)
BS=64; job gpt-b64-plain plain -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=64
# 3. out of memory for real: a batch whose attention cannot fit
BS=65536; job gpt-oom probe -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=65536
# 4. the built-in PyTorch CNN, tens of seconds an epoch, 2 batch sizes
LABEL=torch-cnn
for BS in 128 512; do
  job cnn-b$BS probe -- WORKLOAD torch-cnn --batch-size $BS $CNN
  job cnn-b$BS full -- WORKLOAD torch-cnn --batch-size $BS $CNN
done
# 5. Lightning and the HF Trainer on the GPU
LABEL=lightning_cnn; BS=256
job lightning-b256 probe -- python3 $S/lightning_cnn.py --device $DEV --batch-size 256 --samples $SAMPLES --epochs $EP
job lightning-b256 full -- python3 $S/lightning_cnn.py --device $DEV --batch-size 256 --samples $SAMPLES --epochs $EP
LABEL=hf_trainer; BS=64
job hf-b64 probe -- python3 $S/hf_trainer.py --device $DEV --batch-size 64 --samples $HFS --epochs $EP
job hf-b64 full -- python3 $S/hf_trainer.py --device $DEV --batch-size 64 --samples $HFS --epochs $EP
# 6. torch.compile: its warm-up in the first steps
LABEL=gpt_loop_compile; BS=64
job gpt-compile-b64 probe -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=64 --compile=True
job gpt-compile-b64 full -- python3 $S/shapes/gpt_loop.py $GPT --batch_size=64 --compile=True
[ -n "${SMI:-}" ] && kill $SMI
exit 0
