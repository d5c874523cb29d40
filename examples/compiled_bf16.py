"""A torch.compile'd model trained under bfloat16 autocast (an MLP; --model gpt2, llama
or resnet: a small GPT-2 or Llama from transformers or a ResNet-18 from torchvision, all
built from a config, nothing downloaded). Compiled code runs fused
kernels, not the ops written here, yet autocast decided each op's precision while
dynamo and AOTAutograd traced it: `ampscope run` reads those decisions from the
compiled graphs (forward and backward) and lists graph breaks and recompilations.

--graph-break prints a statistic inside forward (a .item(): dynamo splits the graph
there); --vary-batch makes the last batch smaller, which with dynamic=False compiles
the model again for the new shape. --validate ends with a batch under torch.no_grad,
which AOTAutograd compiles as a graph of its own (an inference graph). --checkpoint trains with
activation checkpointing (the MLP's layers under torch.utils.checkpoint; HF's
gradient_checkpointing_enable() for gpt2 and llama): the partitioner puts the recomputed
forward in the backward graph, which ampscope lists in the phase "recompute". --compile function
compiles a function holding the autocast region and the loss instead of the model (the
model inlined in its graph, no module call to see); --compile-optimizer compiles the
optimizer step as PyTorch's recipe does (`@torch.compile(fullgraph=False) def step():
optimizer.step()`). --compile blocks compiles each transformer block (or ResNet block) on its
own, in place (`block.compile()`, torchtitan's and HF's recipe: one graph serves every block
alike, compiled once); --compile block-wrappers puts `torch.compile(block)` in its place instead.
--pure-bf16 trains the parameters themselves in bf16, without autocast. --eager runs the same model and steps without
torch.compile: `ampscope diff eager.ampscope compiled.ampscope` then sets the two
runs side by side (what autocast ran in which dtype, per module, and the time)."""
import argparse

import torch
import torch.utils.checkpoint
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--batch", type=int, default=16,
                    help="samples per step (the MLP; GPT-2, Llama and ResNet take a quarter)")
parser.add_argument("--backend", default="inductor")
parser.add_argument("--graph-break", action="store_true")
parser.add_argument("--vary-batch", action="store_true")
parser.add_argument("--model", choices=["mlp", "gpt2", "llama", "resnet"], default="mlp")
parser.add_argument("--eager", action="store_true", help="no torch.compile: the eager baseline of the same run")
parser.add_argument("--compile", choices=["model", "function", "blocks", "block-wrappers"], default="model",
                    help="what torch.compile wraps: the model, a function of the batch's autocast region and loss, "
                         "or each block (gpt2, llama, resnet) in place (blocks) or as a compiled module (block-wrappers)")
parser.add_argument("--compile-optimizer", action="store_true", help="the optimizer step compiled too")
parser.add_argument("--checkpoint", action="store_true", help="activation checkpointing (not --model resnet)")
parser.add_argument("--pure-bf16", action="store_true", help="bf16 parameters, no autocast")
parser.add_argument("--validate", action="store_true",
                    help="after the last step, one validation batch under torch.no_grad (its own compiled graph)")
args = parser.parse_args()
if args.checkpoint and args.model == "resnet":
    parser.error("--checkpoint: the MLP, gpt2 or llama")
if args.compile in ("blocks", "block-wrappers") and args.model == "mlp":
    parser.error("--compile blocks: gpt2, llama or resnet (the MLP has no blocks alike)")


class MLP(nn.Module):
    def __init__(self, graph_break: bool, checkpoint: bool):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU())
        self.head = nn.Linear(64, 10)
        self.graph_break, self.checkpoint = graph_break, checkpoint

    def forward(self, x):
        if self.checkpoint:
            h = torch.utils.checkpoint.checkpoint(self.layers, x, use_reentrant=False)
        else:
            h = self.layers(x)
        if self.graph_break:
            print(f"mean activation {h.float().mean().item():.4f}")
        return self.head(h)


device = "cuda" if torch.cuda.is_available() else "cpu"
inputs_dtype = torch.bfloat16 if args.pure_bf16 else torch.float32
torch.manual_seed(0)


def build():
    """The model and a function making one (batch size) batch's loss from it."""
    if args.model == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=32,
                            attn_implementation="eager")
        net = GPT2LMHeadModel(config).to(device)

        def gpt2_loss(forward, batch):
            ids = torch.randint(0, config.vocab_size, (batch // 4, 16), device=device)
            return forward(input_ids=ids, labels=ids).loss

        return net, gpt2_loss
    if args.model == "llama":
        # Grouped-query attention (4 query heads, 2 key/value heads) through SDPA; its rotary
        # embedding turns autocast off to compute the angles in fp32.
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                             num_key_value_heads=2, vocab_size=128, max_position_embeddings=32)
        net = LlamaForCausalLM(config).to(device)

        def llama_loss(forward, batch):
            ids = torch.randint(0, config.vocab_size, (batch // 4, 16), device=device)
            return forward(input_ids=ids, labels=ids).loss

        return net, llama_loss
    if args.model == "resnet":
        from torchvision.models import resnet18

        net = resnet18(num_classes=10).to(device)

        def resnet_loss(forward, batch):
            images = torch.randn(batch // 4, 3, 32, 32, device=device, dtype=inputs_dtype)
            return nn.functional.cross_entropy(forward(images), torch.randint(0, 10, (batch // 4,), device=device))

        return net, resnet_loss
    net = MLP(args.graph_break, args.checkpoint).to(device)

    def mlp_loss(forward, batch):
        inputs = torch.randn(batch, 32, device=device, dtype=inputs_dtype)
        target = torch.randint(0, 10, (batch,), device=device)
        return nn.functional.cross_entropy(forward(inputs), target)

    return net, mlp_loss


def blocks_of(net):
    """The model's repeated blocks, as (their container, index): GPT-2's and Llama's decoder
    layers, ResNet's residual blocks."""
    if args.model == "gpt2":
        return [(net.transformer.h, i) for i in range(len(net.transformer.h))]
    if args.model == "llama":
        return [(net.model.layers, i) for i in range(len(net.model.layers))]
    return [(stage, i) for stage in (net.layer1, net.layer2, net.layer3, net.layer4) for i in range(len(stage))]


model, batch_loss = build()
if args.pure_bf16:
    model.to(torch.bfloat16)
if args.checkpoint and args.model != "mlp":
    model.gradient_checkpointing_enable()
compiled = model
if args.eager or args.compile == "function":
    pass
elif args.compile == "blocks":
    for parent, i in blocks_of(model):
        parent[i].compile(backend=args.backend, dynamic=False)
elif args.compile == "block-wrappers":
    for parent, i in blocks_of(model):
        parent[i] = torch.compile(parent[i], backend=args.backend, dynamic=False)
else:
    compiled = torch.compile(model, backend=args.backend, dynamic=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)


def autocast_loss(batch):
    if args.pure_bf16:
        return batch_loss(compiled, batch)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        return batch_loss(compiled, batch)


def optimizer_step():
    optimizer.step()


if not args.eager and args.compile == "function":
    autocast_loss = torch.compile(autocast_loss, backend=args.backend, dynamic=False)
if not args.eager and args.compile_optimizer:
    optimizer_step = torch.compile(optimizer_step, backend=args.backend, fullgraph=False)

for step in range(args.steps):
    batch = args.batch // 2 if args.vary_batch and step == args.steps - 1 else args.batch
    optimizer.zero_grad(set_to_none=True)
    loss = autocast_loss(batch)
    loss.backward()
    optimizer_step()
print(f"final loss {loss.item():.4f}")
if args.validate:
    model.eval()
    with torch.no_grad(), torch.autocast(device_type=device, dtype=torch.bfloat16):
        print(f"validation loss {batch_loss(compiled, args.batch).item():.4f}")
