"""Two gloo ranks call the agent's agree() once a step, as its hook does, rank 0 deciding to
stop at step STOP_AT; each rank prints the step it left at and the collectives it took part in.
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
for step in range(1, 100_000):
    time.sleep(0.001)  # a 1 ms step
    if torch_devices.agree(rank == 0 and step >= STOP_AT):
        print(f"rank {rank} left at step {step} after {collectives} collectives", flush=True)
        break
else:
    print(f"rank {rank} never left", flush=True)
    sys.exit(1)
dist.barrier()
dist.destroy_process_group()
