#pragma once
// Floating-point operations of GEMM, convolution and attention ops, counted from
// the op name and the input shapes the profiler recorded (ATen argument order),
// the way torch.utils.flop_counter counts them: a multiply-add is 2 FLOPs, and
// bias adds, softmax and the like are left out.
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

// FLOPs of one call of a GEMM/conv/attention op: mm, addmm, bmm, baddbmm,
// matmul, linear, convolution (and conv1d/2d/3d, conv_transpose*),
// convolution_backward, the _scaled_dot_product_*_attention kernels and their
// backward. 0 for any other op, or when the shapes do not fit the op.
//
// A forward convolution's output spatial size is not in its inputs (stride and
// padding are not tensors, so they are not recorded); op_flops takes it to be
// the input's, which is exact for stride-1 'same' convolutions and an
// overestimate for strided ones. flops_per_step does better when the table has
// the matching convolution_backward row.
double op_flops(const std::string& name, const std::vector<Shape>& input_shapes);

// FLOPs per training step of an op table covering `profiled_steps` steps: the
// sum of op_flops * calls over the leaf compute ops only (mm, addmm, bmm,
// baddbmm, convolution, convolution_backward, _scaled_dot_product_* kernels),
// so that linear/matmul/conv2d, which are rows too and run those underneath,
// count once. 0 when profiled_steps <= 0.
double flops_per_step(const std::vector<OpStats>& rows, int64_t profiled_steps);

}  // namespace ampscope::profiler
