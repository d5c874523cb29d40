"""A Hugging Face GPT-2 trained the usual way in float16: torch.autocast(float16),
GradScaler, scaler.unscale_ before gradient clipping, AdamW (fused on CUDA).

The model is built from a GPT2Config (no download) and fed random tokens, so it runs
anywhere transformers is installed; on a GPU the defaults are GPT-2 small's shape.
Capture it with:
    ampscope run --out gpt2.ampscope examples/hf_gpt2_fp16.py
On the CPU, try small sizes:  --layers 2 --width 64 --heads 4 --seq-len 32 --batch-size 4
--compile runs the model through torch.compile (--compile reduce-overhead: with CUDA graphs).
It prints the steady step time (steps after --warmup, with the device synchronized at
both ends only), which bench/python_script_overhead.py compares with and without capture.
"""
import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--warmup", type=int, default=5)
parser.add_argument("--layers", type=int, default=12)
parser.add_argument("--width", type=int, default=768)
parser.add_argument("--heads", type=int, default=12)
parser.add_argument("--seq-len", type=int, default=1024)
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--vocab-size", type=int, default=50257)
parser.add_argument("--compile", nargs="?", const="default", metavar="MODE",
                    help="torch.compile the model (mode: default, reduce-overhead, max-autotune, ...)")
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
config = GPT2Config(n_layer=args.layers, n_embd=args.width, n_head=args.heads,
                    n_positions=args.seq_len, vocab_size=args.vocab_size)
model = GPT2LMHeadModel(config).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device == "cuda")
scaler = torch.amp.GradScaler(device)
forward = torch.compile(model, mode=args.compile) if args.compile else model


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


start = None
for step in range(args.steps):
    if step == args.warmup:
        sync()
        start = time.perf_counter()
    tokens = torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len), device=device)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = forward(input_ids=tokens, labels=tokens).loss
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
sync()
print(f"final loss {loss.item():.4f}, loss scale {scaler.get_scale():g}")
if start is not None:
    print(f"steady step ms: {(time.perf_counter() - start) * 1e3 / (args.steps - args.warmup):.3f}")
