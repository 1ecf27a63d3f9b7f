#!/usr/bin/env python3
# pytorch_step: PyTorch's training step on the course's model, for
# tools/bench_step.sh to set beside the stages': N processes over gloo, one
# thread each (as a stage's rank runs its products), DistributedDataParallel
# and AdamW (--what ddp, lecture 1's counterpart) or DDP with
# ZeroRedundancyOptimizer over AdamW (--what zero1, lecture 2's). Each rank
# takes batch/N random examples, one-hot encoded as the stages do. Prints the
# milliseconds a step takes, averaged over steps 2 on, the slowest rank's.
# usage: tools/pytorch_step.py --what ddp|zero1 --ranks N --steps S
#        [--context T --hidden H --layers L --batch B]
import argparse
import os
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

from pytorch_loss import MLP  # the stages' model (tools/ is this script's folder, so on the path)

VOCAB = 27


def rank_main(rank, a, port, out):
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=a.ranks)
    torch.manual_seed(1234)
    sizes = [a.context * VOCAB] + [a.hidden] * a.layers + [VOCAB]
    model = DDP(MLP(sizes))
    if a.what == "ddp":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    else:
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-3,
                                      weight_decay=0.0)
    rows = a.batch // a.ranks
    g = torch.Generator().manual_seed(rank)
    t0 = None
    for step in range(a.steps):
        if step == 1:
            dist.barrier()
            t0 = time.perf_counter()
        ctx = torch.randint(0, VOCAB, (rows, a.context), generator=g)
        tgt = torch.randint(0, VOCAB, (rows,), generator=g)
        x = F.one_hot(ctx, VOCAB).float().flatten(1)
        loss = F.cross_entropy(model(x), tgt)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
    dist.barrier()
    secs = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
    dist.all_reduce(secs, op=dist.ReduceOp.MAX)
    if rank == 0:
        out.put(1e3 * secs.item() / (a.steps - 1))
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--what", choices=["ddp", "zero1"], required=True)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--context", type=int, default=5)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--batch", type=int, default=384)
    a = p.parse_args()
    if a.ranks < 1 or a.steps < 2 or a.batch < a.ranks:
        p.error("needs --ranks >= 1, --steps >= 2 and --batch >= --ranks")
    ctx = mp.get_context("spawn")
    out = ctx.SimpleQueue()
    mp.start_processes(rank_main, args=(a, free_port(), out), nprocs=a.ranks, start_method="spawn")
    print(f"{out.get():.2f}")


if __name__ == "__main__":
    main()
