"""Training with models nobody here wrote, on the CPU, for ampscope's checks against
PyTorch's own profiler: torchvision's resnet18(num_classes=10), and transformers'
GPT2LMHeadModel and LlamaForCausalLM built from a config (no download), and torch.nn.LSTM
as PyTorch's word_language_model example uses it (embedding, LSTM, linear decoder).

    peer_training.py MODEL [--steps N]                  the training script (for `ampscope run`)
    peer_training.py MODEL --digest OUT.txt             (with either) writes each step's loss and the
        trained parameters' checksum at the end as exact hex floats, to compare runs to the bit
    peer_training.py MODEL --torch-profiler OUT.json    the same training under
        torch.profiler.profile(record_shapes=True); OUT.json: {op name: [input dtypes of a call, ...]}
        (distinct lists, tensor arguments only, in the profiler's spellings: "float", "c10::Half")

resnet18 trains under bfloat16 autocast without a scaler (float16 convolutions are not
what CPUs run well); GPT-2 under float16 autocast with torch.amp.GradScaler; Llama under
bfloat16 autocast without a scaler (its rotary embedding turns autocast off to compute the
angles in float32); the LSTM under bfloat16 autocast without a scaler (autocast runs the CPU's
aten::lstm in bfloat16, whose oneDNN layers hand back float32 gradients for bfloat16 inputs).
"""
import argparse
import json
import tempfile

import torch
import torch.nn.functional as F

TENSOR_TYPES = {"float", "c10::Half", "c10::BFloat16", "long int", "int", "bool", "double"}

parser = argparse.ArgumentParser()
parser.add_argument("model", choices=["resnet18", "gpt2", "llama", "lstm"])
parser.add_argument("--steps", type=int, default=2)
parser.add_argument("--torch-profiler", metavar="JSON")
parser.add_argument("--digest", metavar="TXT")
args = parser.parse_args()
torch.manual_seed(0)

if args.model == "resnet18":
    from torchvision.models import resnet18

    model = resnet18(num_classes=10)
    dtype, scaler = torch.bfloat16, None

    def batch():
        return torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))

    def loss_of(x, y):
        return F.cross_entropy(model(x), y)
elif args.model == "lstm":

    class WordLanguageModel(torch.nn.Module):
        def __init__(self, tokens=256, width=64):
            super().__init__()
            self.encoder = torch.nn.Embedding(tokens, width)
            self.rnn = torch.nn.LSTM(width, width, num_layers=2, batch_first=True)
            self.decoder = torch.nn.Linear(width, tokens)

        def forward(self, x):
            return self.decoder(self.rnn(self.encoder(x))[0])

    model = WordLanguageModel()
    dtype, scaler = torch.bfloat16, None

    def batch():
        tokens = torch.randint(0, 256, (4, 16))
        return tokens, tokens

    def loss_of(x, y):
        return F.cross_entropy(model(x).flatten(0, 1), y.flatten())
elif args.model == "llama":
    from transformers import LlamaConfig, LlamaForCausalLM

    model = LlamaForCausalLM(LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                                         max_position_embeddings=32))
    dtype, scaler = torch.bfloat16, None

    def batch():
        tokens = torch.randint(0, 256, (4, 16))
        return tokens, tokens

    def loss_of(x, y):
        return model(input_ids=x, labels=y).loss
else:
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=32))
    dtype, scaler = torch.float16, torch.amp.GradScaler("cpu")

    def batch():
        tokens = torch.randint(0, 256, (4, 16))
        return tokens, tokens

    def loss_of(x, y):
        return model(input_ids=x, labels=y).loss

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)


def train(digest=None):
    for _ in range(args.steps):
        x, y = batch()
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=dtype):
            loss = loss_of(x, y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        if digest is not None:
            digest.write(f"loss {loss.item().hex()}\n")
    if digest is not None:
        with torch.no_grad():
            total = sum(p.double().pow(2).sum() for p in model.parameters())
        digest.write(f"parameters {total.item().hex()}\n")
    return loss.item()


digest = open(args.digest, "w") if args.digest else None
if args.torch_profiler:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        train(digest)
    # The input types are in the exported trace's "Input type" args (FunctionEvent has no field for them).
    with tempfile.NamedTemporaryFile(suffix=".json") as trace:
        prof.export_chrome_trace(trace.name)
        events = json.load(open(trace.name))["traceEvents"]
    seen = {}
    for evt in events:
        if evt.get("cat") == "cpu_op":
            types = tuple(t for t in evt["args"].get("Input type", []) if t in TENSOR_TYPES)
            seen.setdefault(evt["name"], set()).add(types)
    with open(args.torch_profiler, "w") as out:
        json.dump({k: sorted(list(v) for v in s) for k, s in seen.items()}, out)
else:
    print(f"final loss {train(digest):.6f}")
if digest is not None:
    digest.close()
