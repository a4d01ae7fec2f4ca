# Shared by the GPU recording scripts: each job under its own timeout, one line in jobs.txt each.
#   job NAME KIND -- CMD...     KIND: probe (the agent's defaults), full (--full), plain (no agent)
# CMD may start with WORKLOAD to run one of the agent's built-in workloads.
# Needs: OUT, AG (the agent command), INSTANCE, LABEL, BS, T (a probe's timeout; runs get 2x).
# Every run's output is timed line by line (benchmarks/stamp.py: *.lines.gz beside it, the program
# unbuffered) - a plain run's own progress, which benchmarks/progress.py sets against its probe's.
STAMP="python3 $(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/stamp.py"
job() {
  local name=$1 kind=$2; shift 3
  local d="$OUT/$name"; mkdir -p "$d"
  # DEADLINE (epoch seconds, optional): the device call's end - a job never runs past it, and
  # none starts with under 30 s left (a cut run is written down as cut, rc 124)
  local tp=$T tf=$((T*2))
  if [ -n "${DEADLINE:-}" ]; then
    local left=$((DEADLINE - $(date +%s)))
    if [ "$left" -lt 30 ]; then echo "$name $kind skipped: ${left}s left" | tee -a "$OUT/jobs.txt"; return; fi
    [ "$tp" -gt "$left" ] && tp=$left; [ "$tf" -gt "$left" ] && tf=$left
  fi
  # a fresh compile cache for every job: a real full run, like its probe, starts on a fresh host
  export TORCHINDUCTOR_CACHE_DIR=/tmp/probecast-cache/$name-$kind TRITON_CACHE_DIR=/tmp/probecast-cache/$name-$kind/triton
  local t0 t1 rc
  t0=$(date +%s.%N)
  local rec=(--instance "$INSTANCE" --probe "$name" --output "$d/output.txt")
  local what=(run --workload-label "$LABEL" --batch-size "$BS" -- "$@")
  [ "$1" = WORKLOAD ] && { shift; what=(workload "$@"); }
  case $kind in
    probe) timeout "$tp" $STAMP "$d/agent-probe.err" "$d/probe.lines.gz" -- $AG "${what[0]}" "${rec[@]}" --out "$d/probe.jsonl" "${what[@]:1}" ;;
    full)  timeout "$tf" $STAMP "$d/agent-full.err" "$d/full.lines.gz" -- $AG "${what[0]}" --full "${rec[@]}" --out "$d/full.jsonl" "${what[@]:1}" ;;
    plain) timeout "$tf" $STAMP "$d/output.txt" "$d/plain.lines.gz" -- "$@" ;;
  esac
  rc=$?; t1=$(date +%s.%N)
  echo "$name $kind rc=$rc wall=$(python3 -c "print(round($t1-$t0,3))")" | tee -a "$OUT/jobs.txt"
}

# nvidia-smi every 500 ms beside the jobs (NVML through the agent against nvidia-smi); the
# machine's facts in gpu.csv and env.txt
gpu_watch() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.csv" 2>&1
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,clocks.sm --format=csv,noheader,nounits \
    -lms 500 > "$OUT/nvidia-smi.csv" 2>&1 &
  SMI=$!
  { nproc; python3 -c "import torch,sys; print(sys.version, torch.__version__, torch.cuda.get_device_name())"; } > "$OUT/env.txt" 2>&1
}
