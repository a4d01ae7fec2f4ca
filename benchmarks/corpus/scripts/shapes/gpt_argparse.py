"""A step-budgeted GPT run with argparse flags: adapted from karpathy/llm.c `train_gpt2.py`
(commit f1e2ace), the PyTorch reference trainer, and its data format
(`dev/data/data_common.py` write_datafile).

Kept from the original: argparse flags with llm.c's names (`--batch_size`, `--sequence_length`,
`--total_batch_size`, `--num_iterations`, `--val_loss_every`, `--val_max_steps`,
`--sample_every`, `--learning_rate`, `--warmup_iters`, `--learning_rate_decay_frac`,
`--weight_decay`, `--grad_clip`, `--output_dir`, `--overfit_single_batch`, `--compile`, ...);
its own DistributedDataLoader (no torch DataLoader, no epochs) that reads `.bin` token shards
(256-int32 header with magic 20240520, then uint16 tokens) and walks them sequentially,
advancing to the next shard; gradient accumulation derived from total_batch_size;
`for step in range(args.num_iterations + 1)` with `last_step`: validation over val_max_steps
batches every val_loss_every steps, at step 0 and after the last step, and sampling every
sample_every steps; AdamW (configure_optimizers) with llm.c's cosine-with-warmup get_lr();
grad clipping; the per-step log line with ms and tok/s, main.log in output_dir; the final
"final 20 iters avg" line; the DDP branch (torchrun; gloo on CPU).

Changed: the data are synthetic - the script writes train/val shards in llm.c's format
(tokens of a 256-symbol vocabulary made of random "words", 4 train shards of 250k tokens,
1 val shard of 100k) into `<tmp>/probecast_shapes/llmc_data/` on first run; the model is
nanoGPT's (shapes/gpt_model.py, 4 layers, 128 wide) instead of llm.c's copy of it; GPT-2 weight
loading, tiktoken and the C-bridge tensor writing are left out (sampling decodes symbols as
characters); defaults changed for CPU: overfit_single_batch 0 (llm.c's default 1 overfits one
batch for its C tests), total_batch_size 0 meaning one micro-batch per step, output_dir under
the temp folder; added: a checkpoint (model + optimizer + step) saved in output_dir after each
validation, as llm.c's C trainer does with `-n checkpoint_every` - the Python reference only
writes weights for the C side. The brief's suggested names were --max_steps / --eval_every:
this script keeps llm.c's real names, --num_iterations / --val_loss_every.

Batch size flag: `--batch_size N`. Full run, as recorded:
    python gpt_argparse.py --batch_size 8 --num_iterations 1500 --val_loss_every 100
    python gpt_argparse.py --batch_size 32 --num_iterations 400 --val_loss_every 100
"""

import os
import math
import glob
import tempfile
from contextlib import nullcontext

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed import init_process_group, destroy_process_group
import torch.distributed as dist

from gpt_model import GPTConfig, GPT

DATA_DIR = os.path.join(tempfile.gettempdir(), "probecast_shapes", "llmc_data")

# -----------------------------------------------------------------------------
# Our own simple Distributed Data Loader

def _peek_data_shard(filename):
    # only reads the header, returns header data
    with open(filename, "rb") as f:
        # first read the header, which is 256 int32 integers (4 bytes each)
        header = np.frombuffer(f.read(256*4), dtype=np.int32)
    if header[0] != 20240520:
        print("ERROR: magic number mismatch in the data .bin file!")
        print("---> HINT: Are you passing in a correct file with --input_bin?")
        exit(1)
    assert header[1] == 1, "unsupported version"
    ntok = header[2] # number of tokens (claimed)
    return ntok # for now just return the number of tokens

def _load_data_shard(filename):
    with open(filename, "rb") as f:
        # first read the header, which is 256 int32 integers (4 bytes each)
        header = np.frombuffer(f.read(256*4), dtype=np.int32)
        assert header[0] == 20240520, "magic number mismatch in the data .bin file"
        assert header[1] == 1, "unsupported version"
        ntok = header[2] # number of tokens (claimed)
        # the rest of it are tokens, stored as uint16
        tokens = np.frombuffer(f.read(), dtype=np.uint16)
    assert len(tokens) == ntok, "number of tokens read does not match header?"
    return tokens

class DistributedDataLoader:
    def __init__(self, filename_pattern, B, T, process_rank, num_processes):
        self.process_rank = process_rank
        self.num_processes = num_processes
        self.B = B
        self.T = T

        # glob files that match the pattern
        self.files = sorted(glob.glob(filename_pattern))
        assert len(self.files) > 0, f"did not find any files that match the pattern {filename_pattern}"

        # load and validate all data shards, count number of tokens in total
        ntok_total = 0
        for fname in self.files:
            shard_ntok = _peek_data_shard(fname)
            assert shard_ntok >= num_processes * B * T + 1
            ntok_total += shard_ntok
        self.ntok_total = ntok_total
        print0(f"DataLoader: total number of tokens: {ntok_total:,} across {len(self.files)} files")

        # kick things off
        self.current_shard = None
        self.reset()

    def reset(self):
        # we're being a bit clever here: if we already had shard 0 loaded,
        # then don't do the work to reload it, just reset the pointer
        if self.current_shard != 0:
            self.current_shard = 0
            self.tokens = _load_data_shard(self.files[self.current_shard])
        self.current_position = self.process_rank * self.B * self.T

    def advance(self): # advance to next data shard
        self.current_shard = (self.current_shard + 1) % len(self.files)
        self.current_position = self.process_rank * self.B * self.T
        self.tokens = _load_data_shard(self.files[self.current_shard])

    def next_batch(self):
        B = self.B
        T = self.T
        buf = self.tokens[self.current_position : self.current_position+B*T+1]
        buf = torch.tensor(buf.astype(np.int32), dtype=torch.long)
        x = (buf[:-1]).view(B, T) # inputs
        y = (buf[1:]).view(B, T) # targets
        # advance the start pointer in current shard
        self.current_position += B * T * self.num_processes
        # if loading the next batch would be out of bounds advance the shard
        if self.current_position + (B * T * self.num_processes + 1) > len(self.tokens):
            self.advance()
        return x, y

# -----------------------------------------------------------------------------
# the synthetic stand-in for dev/data/tinyshakespeare.py's output (llm.c's .bin format)

def write_datafile(filename, toks):
    header = np.zeros(256, dtype=np.int32) # header is always 256 int32 values
    header[0] = 20240520
    header[1] = 1
    header[2] = len(toks) # number of tokens after the 256*4 bytes of header
    with open(filename, "wb") as f:
        f.write(header.tobytes())
        f.write(np.asarray(toks, dtype=np.uint16).tobytes())

def prepare_synthetic(data_dir, vocab=256, seed=42):
    rng = np.random.default_rng(seed)
    # 500 "words" of 2-8 symbols; text is words drawn with a Zipf-like law
    words = [rng.integers(1, vocab, size=rng.integers(2, 9)) for _ in range(500)]
    p = 1.0 / np.arange(1, 501); p /= p.sum()
    def text(ntok):
        ids = rng.choice(500, size=ntok // 3, p=p)
        toks = np.concatenate([np.append(words[i], 0) for i in ids])[:ntok]
        return toks
    os.makedirs(data_dir, exist_ok=True)
    for i in range(4):
        write_datafile(os.path.join(data_dir, f"synthetic_train_{i:02d}.bin"), text(250_000))
    write_datafile(os.path.join(data_dir, "synthetic_val_00.bin"), text(100_000))
    print(f"wrote 4 train shards and 1 val shard to {data_dir}")

def print0(*args, **kwargs):
    # modified print that only prints from the master process
    # if this is not a distributed run, it's just a print
    if int(os.environ.get("RANK", 0)) == 0:
        print(*args, **kwargs)

# -----------------------------------------------------------------------------
# int main

if __name__ == "__main__":
    import time
    import argparse
    print0(f"Running pytorch {torch.version.__version__}")

    parser = argparse.ArgumentParser()
    # file system input / output
    parser.add_argument("--input_bin", type=str, default=os.path.join(DATA_DIR, "synthetic_train_*.bin"), help="input .bin to train on")
    parser.add_argument("--input_val_bin", type=str, default=os.path.join(DATA_DIR, "synthetic_val_*.bin"), help="input .bin to eval validation loss on")
    parser.add_argument("--output_dir", type=str, default=os.path.join(tempfile.gettempdir(), "probecast_shapes", "out-gpt-argparse"), help="output directory to which to write logs and checkpoints")
    parser.add_argument("--model", type=str, default="d4", help="d4 (4 layers, 128 wide) | d6")
    # token layout for each step of the optimization
    parser.add_argument("--batch_size", type=int, default=8, help="batch size, in units of #batch dimensions")
    parser.add_argument("--sequence_length", type=int, default=64, help="sequence length")
    parser.add_argument("--total_batch_size", type=int, default=0, help="total desired batch size, in units of #tokens (0: one micro-batch per step)")
    # workload (number of steps)
    parser.add_argument("--num_iterations", type=int, default=1500, help="number of iterations to run")
    parser.add_argument("--inference_only", type=int, default=0, help="only run inference")
    # optimization
    parser.add_argument("--learning_rate", type=float, default=1e-3, help="learning rate warmup iterations")
    parser.add_argument("--warmup_iters", type=int, default=50, help="learning rate warmup iterations")
    parser.add_argument("--learning_rate_decay_frac", type=float, default=0.1, help="learning rate warmup iterations")
    parser.add_argument("--weight_decay", type=float, default=0.1, help="weight decay")
    parser.add_argument("--grad_clip", type=float, default=1.0, help="maximum gradient magnitude")
    # evaluation
    parser.add_argument("--val_loss_every", type=int, default=100, help="every how mant steps to evaluate val loss?")
    parser.add_argument("--val_max_steps", type=int, default=20, help="how many batches of val to average?")
    parser.add_argument("--sample_every", type=int, default=0, help="how often to sample from the model?")
    # debugging
    parser.add_argument("--overfit_single_batch", type=int, default=0, help="overfit just one batch of data")
    # memory management
    parser.add_argument("--device", type=str, default="", help="by default we autodetect, or set it here")
    parser.add_argument("--compile", type=int, default=0, help="torch.compile the model")
    parser.add_argument("--dtype", type=str, default="float32", help="float32|float16|bfloat16")
    args = parser.parse_args()

    # args error checking and convenience variables
    B, T = args.batch_size, args.sequence_length
    assert 1 <= T <= 1024
    assert args.dtype in {"float32", "float16", "bfloat16"}
    assert args.model in {"d4", "d6"}

    # set up DDP (distributed data parallel). torchrun sets this env variable
    ddp = int(os.environ.get('RANK', -1)) != -1 # is this a ddp run?
    if ddp:
        init_process_group(backend='nccl' if torch.cuda.is_available() else 'gloo')
        ddp_rank = int(os.environ['RANK'])
        ddp_local_rank = int(os.environ['LOCAL_RANK'])
        ddp_world_size = int(os.environ['WORLD_SIZE'])
        device = f'cuda:{ddp_local_rank}' if torch.cuda.is_available() else 'cpu'
        if device != 'cpu':
            torch.cuda.set_device(device)
        master_process = ddp_rank == 0 # this process will do logging, checkpointing etc.
        seed_offset = 0 # each process gets the exact same seed
    else:
        ddp_rank = 0
        ddp_local_rank = 0
        ddp_world_size = 1
        master_process = True
        seed_offset = 0
        # select the device
        if args.device:
            # provided explicitly by the user
            device = args.device
        else:
            # attempt to autodetect the device
            device = "cpu"
            if torch.cuda.is_available():
                device = "cuda"
            elif hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
                device = "mps"
    print(f"using device: {device}")
    device_type = 'cuda' if 'cuda' in device else 'cpu'

    # calculate gradient accumulation from the desired total batch size and the current run configuration
    tokens_per_fwdbwd = B * T * ddp_world_size
    total_batch_size = args.total_batch_size or tokens_per_fwdbwd
    assert total_batch_size % tokens_per_fwdbwd == 0
    grad_accum_steps = total_batch_size // tokens_per_fwdbwd
    print0(f"total desired batch size: {total_batch_size}")
    print0(f"=> calculated gradient accumulation steps: {grad_accum_steps}")

    # set up a context manager following the desired dtype and device
    ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[args.dtype]
    ctx = torch.amp.autocast(device_type=device_type, dtype=ptdtype) if device_type == "cuda" else nullcontext()

    # rng / reproducibility
    torch.manual_seed(42)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(42)

    # the data (synthetic, written once)
    if master_process and not glob.glob(os.path.join(DATA_DIR, "synthetic_val_*.bin")):
        prepare_synthetic(DATA_DIR)
    if ddp:
        dist.barrier()

    # init the model from scratch (random weights)
    model_config = {
        "d4": GPTConfig(block_size=T, vocab_size=256, n_layer=4, n_head=4, n_embd=128),
        "d6": GPTConfig(block_size=T, vocab_size=256, n_layer=6, n_head=6, n_embd=192),
    }[args.model]
    model = GPT(model_config)
    model.train()
    model.to(device)
    if args.compile:
        print0("compiling the model...")
        model = torch.compile(model)

    # -------------------------------------------------------------------------
    # Our own version of a simple DistributedDataLoader

    # load tokens
    train_loader = DistributedDataLoader(args.input_bin, B, T, ddp_rank, ddp_world_size)
    val_loader = None
    if args.input_val_bin:
        val_loader = DistributedDataLoader(args.input_val_bin, B, T, ddp_rank, ddp_world_size)

    # -------------------------------------------------------------------------
    # main training loop

    # here we wrap model into DDP container
    if ddp:
        model = DDP(model, device_ids=[ddp_local_rank] if device_type == "cuda" else None)
    raw_model = model.module if ddp else model # always contains the "raw" unwrapped model

    # init the optimizer
    optimizer = raw_model.configure_optimizers(weight_decay=args.weight_decay,
                                               learning_rate=args.learning_rate, betas=(0.9, 0.95),
                                               device_type=device_type)

    # learning rate decay scheduler (cosine with warmup)
    def get_lr(it):
        min_lr = args.learning_rate * args.learning_rate_decay_frac
        # 1) linear warmup for warmup_iters steps
        if it < args.warmup_iters:
            return args.learning_rate * (it+1) / args.warmup_iters
        # 2) if it > lr_decay_iters, return min learning rate
        if it > args.num_iterations:
            return min_lr
        # 3) in between, use cosine decay down to min learning rate
        decay_ratio = (it - args.warmup_iters) / (args.num_iterations - args.warmup_iters)
        assert 0 <= decay_ratio <= 1
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) # coeff starts at 1 and goes to 0
        return min_lr + coeff * (args.learning_rate - min_lr)

    # create the logging directory if it does not exist
    logfile = None
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        logfile = os.path.join(args.output_dir, "main.log")
        # create the log file "main.log" inside it, and wipe it clean
        with open(logfile, "w") as f:
            pass

    timings = []
    norm = -1.0   # dummy value to print in inference-only mode
    for step in range(args.num_iterations + 1):
        t0 = time.time()
        last_step = (step == args.num_iterations)

        # once in a while evaluate the validation dataset
        if (args.val_loss_every > 0 \
            and (step % args.val_loss_every == 0 or last_step)) \
            and (val_loader is not None):
            model.eval()
            val_loader.reset()
            with torch.no_grad():
                val_loss = 0.0
                for _ in range(args.val_max_steps):
                    x, y = val_loader.next_batch()
                    x, y = x.to(device), y.to(device)
                    _, loss = model(x, y)
                    val_loss += loss.item()
                val_loss /= args.val_max_steps
            # log to console and to file
            print0(f"val loss {val_loss}")
            if master_process and logfile is not None:
                with open(logfile, "a") as f:
                    f.write("s:%d tel:%f\n" % (step, val_loss))
                # and a checkpoint, as llm.c's C trainer writes every checkpoint_every steps
                if step > 0:
                    ckpt = {"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
                            "step": step, "val_loss": val_loss, "args": vars(args)}
                    torch.save(ckpt, os.path.join(args.output_dir, f"model_{step:08d}.pt"))
                    print0(f"saved checkpoint to {args.output_dir}/model_{step:08d}.pt")

        # once in a while perform model inference on the master process
        if (args.sample_every > 0 \
            and (step % args.sample_every == 0 or last_step)) \
            and master_process:
            model.eval()
            # we'll kick off the generation with the end-of-word symbol 0
            xg = torch.zeros((1, 1), dtype=torch.long, device=device)
            yg = raw_model.generate(xg, 32, temperature=1.0, top_k=40)
            print0('---------------')
            print0(''.join(chr(33 + (int(t) % 94)) for t in yg[0].tolist()))
            print0('---------------')

        # bit confusing: we want to make sure to eval and sample on 0th iteration
        # but also after the very last iteration. so we loop for step <= num_iterations
        # instead of just < num_iterations (one extra due to <=), only to do
        # the validation/sampling one last time, and then we break right here as we're done.
        if last_step:
            break

        # --------------- TRAINING SECTION BEGIN -----------------
        model.train()
        optimizer.zero_grad(set_to_none=True)
        # if we are trying to overfit a single batch, we reset the loader here
        if args.overfit_single_batch:
            train_loader.reset()
        # micro-batch loop where we do gradient accumulation to reach desired total batch size
        lossf = 0.0 # for getting the mean loss (as simple float) over the accumulation steps
        for micro_step in range(grad_accum_steps):
            # fetch a batch
            x, y = train_loader.next_batch()
            x, y = x.to(device), y.to(device)
            if ddp:
                # we want only the last micro-step to sync grads in a DDP model
                # the official way to do this is with model.no_sync(), but that is a
                # context manager that bloats the code, so we just toggle this variable
                model.require_backward_grad_sync = (micro_step == grad_accum_steps - 1)
            # forward pass
            with ctx:
                _, loss = model(x, y)
                # we have to scale the loss to account for gradient accumulation,
                # because the gradients just add on each successive backward().
                # addition of gradients corresponds to a SUM in the objective, but
                # instead of a SUM we want MEAN, so we scale the loss here
                loss = loss / grad_accum_steps
                lossf += loss.detach() # keep track of the mean loss
            # backward pass
            if not args.inference_only:
                loss.backward()
        if ddp:
            dist.all_reduce(lossf, op=dist.ReduceOp.AVG)
        lossf = lossf.item()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        # determine and set the learning rate for this iteration
        lr = get_lr(step)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
        # step the optimizer
        optimizer.step()
        # --------------- TRAINING SECTION END -------------------
        # everything that follows now is just diagnostics, prints, logging, etc.

        # time and print
        t1 = time.time()
        # the 0th iteration is often an outlier (much slower) => skip logging it
        tokens_per_second = grad_accum_steps * ddp_world_size * B * T / (t1-t0)
        print0(f"step {step+1:4d}/{args.num_iterations} | train loss {lossf:.6f} | norm {norm:.4f} | lr {lr:.2e} | ({(t1-t0)*1000:.2f} ms | {tokens_per_second:.0f} tok/s)")
        # log to logile
        if master_process and logfile is not None:
            with open(logfile, "a") as f:
                f.write("s:%d trl:%f\n" % (step, lossf))

        # keep track of smooth timings, last 20 iterations
        if step > 0 and step > args.num_iterations - 20:
            timings.append(t1-t0)

    # print the average of the last 20 timings, to get something smooth-ish
    timings = timings[-20:]
    print0(f"final {len(timings)} iters avg: {np.mean(timings)*1000:.3f}ms")

    # -------------------------------------------------------------------------
    # clean up nice
    if ddp:
        destroy_process_group()
