#pragma once
// Reads what autocast did to an op call from its dtypes alone: the same
// evidence a user would see in PyTorch's profiler with record_shapes.
#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

// The op's name without namespace and overload: "aten::mm.out" -> "mm". Overloads
// do not change what an op computes, so families of ops are matched on this.
std::string_view op_base_name(std::string_view op);

// Whether an op converts its input's dtype (aten::to, _to_copy, .half(), ...).
bool is_cast_op(std::string_view name);

bool is_floating_dtype(std::string_view dtype);
bool is_reduced_precision_dtype(std::string_view dtype);  // float16, bfloat16
// Bits of a floating dtype (64, 32, 16); 0 for others.
int floating_width(std::string_view dtype);

struct CastContext {
  // The op is directly under an op that was entered with autocast on for its
  // device: a cast there was inserted by autocast (its kernel casts the inputs).
  bool parent_entered_under_autocast = false;
  // The op is an inner step of another: of a cast (its _to_copy, copy_ are the outer cast's),
  // or of a compiled graph's decomposed op (the cast to the precision GELU computes in).
  bool inside_cast = false;
  // The op runs in the backward node of a cast autocast inserted (the gradient
  // cast back to the weight's dtype): cast tax paid in the backward pass.
  bool backward_of_autocast_cast = false;
  // The op runs in the backward of an op that promoted mixed inputs (fp32 + fp16 -> fp32): a
  // cast there is autograd's engine casting the gradient of the narrower input back to its
  // dtype, the backward's price of the promotion, which no line of the user's code asked for.
  bool backward_of_promotion = false;
  // Whether autocast acted on the op, where the recorder saw it: the op is on autocast's
  // lists for a device autocast was on for (PyTorch's dispatcher has an autocast kernel for
  // it), or autocast cast something inside it (a composite whose inner op is listed: CUDA's
  // cross_entropy_loss, whose log_softmax autocast keeps in fp32). When it did not, fp32
  // inputs with a reduced-precision output are no demotion but the op's own mixing:
  // batch_norm's fp32 parameters on a bf16 activation, a 0-dim fp32 tensor times an fp16
  // one (type promotion keeps fp16). Unset (a trace read back with dtypes alone): the
  // dtypes decide.
  std::optional<bool> autocast_acted;
  // The op is on autocast's lists, for a device autocast was on for, under a policy other
  // than promote: lower precision (fp16/bf16 out) or fp32, which casts every floating input
  // to fp32. Mixed fp16/bf16 and fp32 inputs with an fp32 output then meet the promotion
  // rule, but autocast ran the op in fp32 and would have whatever its inputs were: kept fp32
  // (mse_loss of an fp16 output and an fp32 target; layer_norm of an fp16 activation with
  // fp32 weights on CUDA). Under promote (cat on the CPU, addcmul on CUDA) it is a promotion.
  bool autocast_listed_not_promote = false;
  // The op is on autocast's lists for a device the script turned autocast off for around it,
  // inside its autocast region (torch.autocast(enabled=False); custom_fwd(cast_inputs=...),
  // which does so): autocast did not act, the script chose the precision (kAutocastOff).
  bool autocast_turned_off = false;
  // The dtype autocast cast the op's inputs to ("" for none seen). It decides an op that
  // ended without outputs: checkpoint(use_reentrant=False) stops its recomputation by
  // raising inside the op that saved the last tensor it needs.
  std::string_view autocast_cast_to;
  // The op ran inside one of FSDP's own scopes ("FSDP::all_gather", "FSDP::cast_forward_inputs",
  // "FullyShardedDataParallel._pre_forward"): a conversion there (a cast, or a copy between
  // floating dtypes) is its mixed-precision policy's.
  bool in_sharding_scope = false;
};

// What the promotion rule needs of one floating-point dtype: its width, and which
// 16-bit type it is (fp16 and bf16 mixed promote to fp32).
struct FloatKind {
  int width = 0;  // 0: not floating (integers, bool, wrapped numbers)
  bool bfloat16 = false;
};
FloatKind float_kind(std::string_view dtype);

// The floating inputs of an op, summed up for the rules below.
struct FloatMix {
  bool any = false, reduced = false, mixed_reduced = false;
  int widest = 0, narrowest = 1000;
  void add(FloatKind k) {
    if (k.width == 0) return;
    if (reduced && k.width == 16 && bfloat16_seen != k.bfloat16) mixed_reduced = true;
    if (k.width == 16) {
      bfloat16_seen = reduced ? bfloat16_seen : k.bfloat16;
      reduced = true;
    }
    any = true;
    widest = std::max(widest, k.width);
    narrowest = std::min(narrowest, k.width);
  }
  // Floating inputs of several widths (or fp16 with bf16) and an output of the type they
  // promote to: the op computed at the widest precision of its inputs.
  bool promotes_to(FloatKind out) const {
    if (!any || out.width == 0) return false;
    const int promoted_width = mixed_reduced ? std::max(widest, 32) : widest;
    return (narrowest < widest || mixed_reduced) && out.width == promoted_width;
  }

 private:
  bool bfloat16_seen = false;
};

// Category of one call. Rules, in order:
//  - a cast (outermost): autocast's if its parent ran under autocast (or it casts a gradient
//    back in the backward of autocast's cast); the promotion's if it casts a gradient back
//    in the backward of a promoted op; else explicit;
//  - an op that ended without outputs (raised) after autocast cast its inputs: demoted, or
//    kept fp32 where autocast cast them to fp32;
//  - an op autocast would have acted on, run where the script turned autocast off: autocast_off;
//  - floating inputs of several widths and an output of the widest: promoted, unless autocast
//    listed the op under a policy other than promote and the output is float32: kept fp32;
//  - a floating input wider than a reduced-precision output: demoted, and
//  - only reduced-precision floating inputs and a float32 output: kept fp32, where
//    autocast acted on the op (CastContext::autocast_acted; unset: assumed);
//  - anything else ran in its inputs' precision: unchanged.
OpCategory classify_op(std::string_view name, const std::vector<DtypeName>& input_dtypes,
                       const std::vector<DtypeName>& output_dtypes, const CastContext& context);

}  // namespace ampscope::profiler
