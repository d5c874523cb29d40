// Negative control for check_bindings.sh: linked with LibTorch ahead of libstdc++
// and not rewritten, as the Ubuntu toolchain did; the check must fail on it.
#include <torch/torch.h>

#include <filesystem>

int main() { return std::filesystem::exists("/") && torch::ones({1}).item<float>() == 1.0f ? 0 : 1; }
