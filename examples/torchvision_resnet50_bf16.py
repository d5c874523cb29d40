"""torchvision's ResNet-50 trained in bfloat16 autocast with channels-last memory
format, no GradScaler (bfloat16 has float32's exponent range), SGD with momentum.

Built with weights=None (no download) and fed random images, so it runs anywhere
torchvision is installed. Capture it with:
    ampscope run --out resnet50.ampscope examples/torchvision_resnet50_bf16.py
On the CPU, try small sizes:  --image-size 32 --batch-size 2 --steps 3 --warmup 1
It prints the steady step time (steps after --warmup, with the device synchronized at
both ends only), which bench/python_script_overhead.py compares with and without capture.
"""
import argparse
import time

import torch
import torch.nn.functional as F
from torchvision.models import resnet50

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--warmup", type=int, default=5)
parser.add_argument("--image-size", type=int, default=224)
parser.add_argument("--batch-size", type=int, default=64)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = resnet50(weights=None, num_classes=1000).to(device, memory_format=torch.channels_last)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


start = None
for step in range(args.steps):
    if step == args.warmup:
        sync()
        start = time.perf_counter()
    images = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=device)
    images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (args.batch_size,), device=device)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
sync()
print(f"final loss {loss.item():.4f}")
if start is not None:
    print(f"steady step ms: {(time.perf_counter() - start) * 1e3 / (args.steps - args.warmup):.3f}")
