"""Measures what `gpupool advise` estimates, on a real GPU: a GPT-style model (random weights: memory and speed do not
depend on them) in training (AdamW, fp32 master weights under bf16 autocast, as PyTorch's mixed precision does) and in
inference (bf16 weights, a prefill that keeps every layer's keys and values: the KV cache).

    python3 scripts/device-sizing.py [--layers 16 --hidden 2048 --heads 16 --vocab 32000 --batch 8 --seq 2048]

Prints one JSON line per mode: parameters, the CUDA context, peak allocated and reserved memory, and the median step
time with tokens/s. Compare with `gpupool advise --params P --mode train|infer --precision bf16 --recompute selective
--layers L --hidden H --heads A --vocab V --batch B --seq S` (docs/sizing.md, "Measured on an H200").
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """GPT-2's layer, as Korthikanti et al. count it: LayerNorm, attention, dropout, LayerNorm, 4h MLP, dropout."""

    def __init__(self, h, heads, dropout):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.up, self.down = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    def forward(self, x, cache=None):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, h // self.heads).transpose(1, 3).unbind(2)
        if cache is not None:
            cache.append((k.contiguous(), v.contiguous()))  # its own storage: a view would keep q alive too
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        x = x + F.dropout(self.proj(a.transpose(1, 2).reshape(b, s, h)), self.dropout, self.training)
        return x + F.dropout(self.down(F.gelu(self.up(self.ln2(x)))), self.dropout, self.training)


class Gpt(nn.Module):
    def __init__(self, layers, h, heads, vocab, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, h)
        self.blocks = nn.ModuleList(Block(h, heads, dropout) for _ in range(layers))
        self.ln = nn.LayerNorm(h)

    def forward(self, tokens, cache=None):
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x, cache)
        if cache is not None:
            x = x[:, -1:]  # a prefill needs the next token's logits only
        return self.ln(x) @ self.embed.weight.t()  # tied output layer


def context_mib():
    torch.cuda.init()
    torch.empty(1, device="cuda")
    free, total = torch.cuda.mem_get_info()
    return (total - free) / 2**20


def timed(step, warmup=2, runs=5):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def report(mode, model, a, seconds):
    print(json.dumps({
        "mode": mode, "params": sum(p.numel() for p in model.parameters()),
        "layers": a.layers, "hidden": a.hidden, "heads": a.heads, "vocab": a.vocab, "batch": a.batch, "seq": a.seq,
        "peak_allocated_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
        "peak_reserved_gib": round(torch.cuda.max_memory_reserved() / 2**30, 2),
        "step_s": round(seconds, 4), "tokens_per_s": round(a.batch * a.seq / seconds)}), flush=True)


def main():
    p = argparse.ArgumentParser()
    for name, default in (("layers", 16), ("hidden", 2048), ("heads", 16), ("vocab", 32000), ("batch", 8), ("seq", 2048)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "context_mib": round(context_mib())}), flush=True)
    tokens = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")

    model = Gpt(a.layers, a.hidden, a.heads, a.vocab).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def train_step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens)
        loss = F.cross_entropy(logits.float().view(-1, a.vocab), tokens.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.reset_peak_memory_stats()
    report("train", model, a, timed(train_step))
    del model, opt
    torch.cuda.empty_cache()

    model = Gpt(a.layers, a.hidden, a.heads, a.vocab).cuda().to(torch.bfloat16).eval()

    @torch.no_grad()
    def prefill():
        cache = []
        model(tokens, cache)
        return cache

    torch.cuda.reset_peak_memory_stats()
    report("infer", model, a, timed(prefill))


if __name__ == "__main__":
    main()
