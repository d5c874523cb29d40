"""ampscope's built-in architectures in Python PyTorch, for the reference peers
(tests/python/*, bench/pytorch_eager_step.py). They call the same ATen ops as
engine/models: nn.Linear is one aten::linear, attention is
F.scaled_dot_product_attention (attention="sdpa", the default) or written out
with matmul/masked_fill/softmax ("math"), and the tied head is F.linear with the
token embedding's weight."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, fan_in, width, layers, classes):
        super().__init__()
        dims = [fan_in] + [width] * layers
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = x.flatten(1)
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.head(x)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class ConvNet(nn.Module):
    def __init__(self, channels, width, layers, classes):
        super().__init__()
        self.conv = nn.Conv2d(channels, width, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(layers)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.blocks(F.relu(self.bn(self.conv(x))))
        return self.head(x.mean((2, 3)))


class Attention(nn.Module):
    def __init__(self, width, heads, seq_len, attention="sdpa"):
        super().__init__()
        self.heads, self.attention = heads, attention
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.register_buffer("mask", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (p.view(b, t, self.heads, c // self.heads).transpose(1, 2) for p in self.qkv(x).split(c, 2))
        if self.attention == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(b, t, c))
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
        att = torch.softmax(att.masked_fill(self.mask[:t, :t], float("-inf")), -1)
        return self.proj(torch.matmul(att, v).transpose(1, 2).reshape(b, t, c))


class GPT(nn.Module):
    def __init__(self, vocab, width, layers, heads, seq_len, attention="sdpa"):
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab, width), nn.Embedding(seq_len, width)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            blk = nn.Module()
            blk.ln1, blk.attn, blk.ln2 = nn.LayerNorm(width), Attention(width, heads, seq_len, attention), nn.LayerNorm(width)
            blk.fc, blk.proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.blocks.append(blk)
        self.ln_f = nn.LayerNorm(width)

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = x + b.attn(b.ln1(x))
            x = x + b.proj(F.gelu(b.fc(b.ln2(x))))
        return F.linear(self.ln_f(x), self.tok_emb.weight)
