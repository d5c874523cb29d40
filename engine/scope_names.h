#pragma once
// The names ampscope's RecordFunction scopes carry, apart from the scopes themselves
// (engine/module_scope.h, which needs ATen): a report reads them without LibTorch.

namespace ampscope::engine {

// Prefix of every module scope's RecordFunction name; the rest is the module's
// dotted path, e.g. "ampscope.module:blocks.1.attn".
inline constexpr const char* kModuleScopePrefix = "ampscope.module:";
// The module path of a loss scaler's own ops (scaling the loss, unscaling and checking
// the gradients, updating the scale): its ops are no layer's, nor the user's code's.
// Parenthesised, so that no nn.Module path can be it.
inline constexpr const char* kLossScalerModule = "(GradScaler)";

}  // namespace ampscope::engine
