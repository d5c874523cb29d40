// The LibTorch headers most ampscope translation units include, precompiled once.
// Narrow headers only: <torch/torch.h> would cost every file several seconds.
#pragma once
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/optimizer.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>
