#!/usr/bin/env python3
# pytorch_loss: loads a model saved by any stage (--save-model) into PyTorch and
# prints its mean loss over every example of the word list, the number lc0
# prints at step 1 with the whole data set as one batch:
#   build/bin/lc0_adam --init MODEL --batch 592752 --steps 1 --lr 1e-9 --sample 0
# usage: tools/pytorch_loss.py MODEL.safetensors [WORDS] [--context T]
# Needs torch and safetensors (pip); make test runs it only where they are installed.
import argparse
import re

import torch
import torch.nn as nn
import torch.nn.functional as F


# The stages name Linear layers only: layers.0 ... layers.L. nn.Sequential would
# number the ReLUs too (0, 2, 4, ...), so a strict load_state_dict into it fails;
# a ModuleList of the Linear layers, with ReLU applied between them, matches.
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x


def load_model(path):
    from safetensors.torch import load_file  # here: tools/pytorch_step.py imports MLP without safetensors

    sd = load_file(path)
    n = len({k.split(".")[1] for k in sd})
    sizes = [sd["layers.0.weight"].shape[1]] + [sd[f"layers.{i}.weight"].shape[0] for i in range(n)]
    model = MLP(sizes)
    model.load_state_dict(sd, strict=True)
    return model


# The course's examples: each lowercase a-z word, then '.', each symbol predicted
# from the T before it in its word ('.' before the word's start).
def examples(words_path, T):
    ctx, tgt = [], []
    with open(words_path, encoding="latin-1") as f:
        for line in f:
            w = line.rstrip("\n").rstrip("\r")
            if not re.fullmatch(r"[a-z]+", w):
                continue
            syms = [0] * T + [ord(c) - 96 for c in w] + [0]
            for i in range(len(w) + 1):
                ctx.append(syms[i:i + T])
                tgt.append(syms[i + T])
    return torch.tensor(ctx), torch.tensor(tgt)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("words", nargs="?", default="/usr/share/dict/words")
    p.add_argument("--context", type=int, default=5)
    a = p.parse_args()
    model = load_model(a.model)
    ctx, tgt = examples(a.words, a.context)
    total = 0.0
    with torch.no_grad():
        for s in range(0, len(tgt), 65536):
            x = F.one_hot(ctx[s:s + 65536], 27).float().flatten(1)
            total += F.cross_entropy(model(x), tgt[s:s + 65536], reduction="sum").double().item()
    print(f"{len(tgt)} examples, mean loss {total / len(tgt):.6f}")


if __name__ == "__main__":
    main()
