"""Two gloo ranks call the agent's agree() once a step, as its hook does, rank 0 deciding to
stop at step STOP_AT; each rank writes the step it left at and the collectives it took part in
and the seconds it took to `left-RANK.txt` (two ranks' prints share one stdout, their lines
run into each other).
(torch_devices.agree: rank 0's decision reaches the others at agreed steps, not every step.)"""

import os
import sys
import time

import torch.distributed as dist

from probecast.core.agent.adapters import torch_devices

STOP_AT = 400
dist.init_process_group("gloo")
rank = dist.get_rank()
collectives = 0
original = dist.all_reduce


def counted(*args, **kwargs):
    global collectives
    collectives += 1
    return original(*args, **kwargs)


dist.all_reduce = counted  # agree resolves it at its first call
began = time.perf_counter()
for step in range(1, 100_000):
    time.sleep(0.001)  # a 1 ms step
    if torch_devices.agree(rank == 0 and step >= STOP_AT):
        with open(f"left-{rank}.txt", "w") as fh:
            fh.write(f"{step} {collectives} {time.perf_counter() - began}\n")
        break
else:
    sys.exit(1)  # never left
dist.barrier()
dist.destroy_process_group()
