"""transformers' Trainer, as users run it: TrainingArguments(bf16=True) on the CPU, with a
LlamaForCausalLM built from a config (no download), its own AdamW, linear LR schedule and
gradient clipping. ampscope's steps are checked against what the Trainer itself logs.

    peer_trainer.py OUT_DIR LOG_JSON    trains 8 steps of 4 sequences, logging every 2;
        LOG_JSON: the Trainer's state.log_history (loss, grad_norm, learning_rate per log)
"""
import json
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

out_dir, log_json = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                     num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                                     max_position_embeddings=32))


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        tokens = torch.randint(0, 256, (16,), generator=torch.Generator().manual_seed(i))
        return {"input_ids": tokens, "labels": tokens}


arguments = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=4, max_steps=8, logging_steps=2,
                              bf16=True, use_cpu=True, learning_rate=1e-3, report_to=[], save_strategy="no",
                              dataloader_num_workers=0, disable_tqdm=True)
trainer = Trainer(model=model, args=arguments, train_dataset=Tokens())
trainer.train()
with open(log_json, "w") as out:
    json.dump(trainer.state.log_history, out)
