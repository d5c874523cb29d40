// The Tensor Core rule table (resources/tensor_core_kernels.txt) against real
// kernel names from cuBLAS, cuBLASLt, cuDNN, CUTLASS, flash-attention and
// PyTorch, and the loader's errors.
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "profiler/cupti/tensor_core_rules.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler::cupti {
namespace {

struct Case {
  const char* name;
  bool tensor_core;
};

// Names as the trace shows them (demangled). Gathered from Nsight/torch.profiler traces.
const Case kCases[] = {
    // cuBLAS (Volta .. Ampere), MMA shape in the name
    {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_tn", true},
    {"ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nn", true},
    {"ampere_h16816gemm_128x256_ldg8_stages_32x3_tn", true},
    {"turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn", true},
    {"volta_h884gemm_64x64_ldg8_nn", true},
    {"volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", true},
    {"ampere_tf32_s1688gemm_tf32_128x128_16x3_nt", true},
    {"turing_int8_i8816gemm_int8_128x128_ldg16_nt", true},
    // cuBLAS/cuDNN xmma (sm80/sm90), cuBLASLt nvjet
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     true},
    {"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x128x32_stage4_warpsize2x2x1_tensor16x8x16_"
     "kernel",
     true},
    {"nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_NTN", true},
    {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", true},
    {"sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_"
     "warpsize2x2x1_g1_tensor16x8x16_kernel",
     true},
    {"volta_fp16_s884cudnn_fp16_256x128_ldg8_splitK_relu_f2f_exp_small_nhwc2nchw_tn_v1", true},
    // CUTLASS 2 / 3
    {"cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>", true},
    {"cutlass::Kernel<cutlass_75_wmma_tensorop_f16_s161616gemm_f16_32x32_128x2_nn_align8>", true},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::collective::"
     "CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<>>>>>("
     "Params)",
     true},
    // attention
    {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::half_t>, false, true, false, false, true, true, false>(Flash_fwd_params)",
     true},
    {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64>"
     ">(Flash_bwd_params)",
     true},
    {"fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::"
     "half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
     true},
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_"
     "0",
     true},
    // CUDA cores
    {"volta_sgemm_128x64_nn", false},
    {"ampere_sgemm_64x32_sliced1x4_tn", false},
    {"cutlass_80_simt_sgemm_128x128_8x5_nn_align1", false},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_"
     "aligna4_alignc4_execute_kernel__5x_cublas",
     false},
    {"fmha_cutlassF_f32_aligned_64x64_rf_sm50(PyTorchMemEffAttention::AttentionKernel<float, "
     "cutlass::arch::Sm50, true, 64, 64, 64, true, true>::Params)",
     false},
    {"fmha_cutlassB_f32_aligned_64x64_k64_sm70", false},
    {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>("
     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>>, float, float)",
     false},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, "
     "std::array<char*, 3ul>>(int, at::native::CUDAFunctor_add<c10::Half>, std::array<char*, 3ul>)",
     false},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormOps<"
     "float, float, float>, unsigned int, float, 4, 4>>(at::native::ReduceOp<float, at::native::"
     "NormOps<float, float, float>, unsigned int, float, 4, 4>)",
     false},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, true, "
     "false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*)",
     false},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::Half, float, c10::Half, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::Half*, c10::Half const*, "
     "int)",
     false},
    {"void at::native::multi_tensor_apply_kernel<at::native::TensorListMetadata<4>>(...)", false},
    {"implicit_convolve_sgemm", false},
};

TEST(TensorCoreRules, ShippedTableClassifiesRealKernelNames) {
  const auto rules = TensorCoreRules::load(TensorCoreRules::default_path());
  ASSERT_GT(rules->rules().size(), 20u);
  for (const Case& c : kCases) {
    const TensorCoreClass k = rules->classify(c.name);
    EXPECT_EQ(k.uses_tensor_cores, c.tensor_core) << c.name << "  (family: '" << k.family << "')";
    EXPECT_FALSE(k.family.empty()) << c.name;
    // Cached answer is the same.
    EXPECT_EQ(rules->classify(c.name).family, k.family);
  }
  const TensorCoreClass unknown = rules->classify("my_custom_kernel");
  EXPECT_FALSE(unknown.uses_tensor_cores);
  EXPECT_EQ(unknown.family, "");
}

// tests/fixtures/h100-kernels.tsv: one kernel a line, its tab-separated
// fields (name, yes/no, evidence, the op that launched it); '#' lines skipped.
// Empty when the fixture is missing.
std::vector<std::vector<std::string>> h100_fixture_rows() {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(AMPSCOPE_FIXTURES_DIR "/h100-kernels.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string f; std::getline(row, f, '\t');) fields.push_back(f);
    rows.push_back(std::move(fields));
  }
  return rows;
}

// The H100 fixture: kernel names recorded on an H100 with the op that launched
// them, labelled yes/no, many of them by the tensor pipe's hardware counter.
// Every line must be classified as labelled.
TEST(TensorCoreRules, ClassifiesEveryKernelOfTheH100Fixture) {
  const auto rows = h100_fixture_rows();
  ASSERT_FALSE(rows.empty()) << "missing fixture " AMPSCOPE_FIXTURES_DIR "/h100-kernels.tsv (tests/fixtures/)";
  const auto rules = TensorCoreRules::load(TensorCoreRules::default_path());
  int checked = 0, counter_checked = 0;
  for (const auto& fields : rows) {
    ASSERT_GE(fields.size(), 4u) << "bad fixture line: " << fields.front();
    ASSERT_TRUE(fields[1] == "yes" || fields[1] == "no") << fields.front();
    const TensorCoreClass k = rules->classify(fields[0]);
    EXPECT_EQ(k.uses_tensor_cores, fields[1] == "yes")
        << fields[0] << "\n  launched by " << fields[3] << ", evidence: " << fields[2]
        << ", matched family: '" << k.family << "'";
    ++checked;
    counter_checked += fields[2] == "counter" ? 1 : 0;
  }
  EXPECT_GE(checked, 20);
  EXPECT_GE(counter_checked, 5);
}

TEST(TensorCoreRules, FirstMatchWinsAndCommentsAreSkipped) {
  const auto rules = TensorCoreRules::parse(
      "# comment line\n"
      "\n"
      "simt   no   SIMT     # trailing comment\n"
      "gemm   yes  any GEMM\n",
      "t.txt");
  ASSERT_EQ(rules->rules().size(), 2u);
  EXPECT_EQ(rules->rules()[1].line, 4);
  EXPECT_FALSE(rules->classify("cutlass_simt_sgemm").uses_tensor_cores);
  EXPECT_EQ(rules->classify("cutlass_simt_sgemm").family, "SIMT");
  EXPECT_TRUE(rules->classify("some_GEMM_kernel").uses_tensor_cores);  // case-insensitive
  EXPECT_EQ(rules->classify("some_gemm_kernel").family, "any GEMM");
}

std::string load_error(const std::string& text) {
  test::ScratchDir dir;
  const auto path = dir / "tensor_core_kernels.txt";
  test::write_file(path, text);
  try {
    TensorCoreRules::load(path.string());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(TensorCoreRules, BadLinesGiveFileAndLine) {
  const std::string pad = "# rules\nhmma yes HMMA\n";
  EXPECT_EQ(load_error(pad + "(hmma yes broken\n")
                .rfind("tensor_core_kernels.txt line 3: bad regex '(hmma'", 0),
            0u)
      << load_error(pad + "(hmma yes broken\n");
  EXPECT_NE(
      load_error(pad + "xmma maybe XMMA\n").find("line 3: second field must be 'yes' or 'no'"),
      std::string::npos);
  EXPECT_NE(load_error(pad + "xmma yes\n").find("line 3: missing family"), std::string::npos);
  EXPECT_NE(load_error(pad + "lonely\n").find("line 3: expected '<pattern> <yes|no> <family>'"),
            std::string::npos);
  test::ScratchDir dir;
  try {
    TensorCoreRules::load((dir / "missing.txt").string());
    FAIL() << "no error for a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

// A demangled CUTLASS 3 name with a long template tail (real ones run to
// kilobytes; this one is ~250 KB).
std::string long_cutlass_name() {
  std::string name =
      "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::collective::"
      "CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<";
  for (int i = 0; i < 6000; ++i) name += "cute::C<128>, cute::C<64>, ";
  return name + ">>>>>(Params)";
}

// Runs `fn` on a thread with a 512 KB stack (a worker thread's stack can be
// that small); returns false when the thread could not be made.
template <typename Fn>
bool run_on_small_stack(Fn fn) {
  struct Call {
    static void* run(void* arg) {
      (*static_cast<Fn*>(arg))();
      return nullptr;
    }
  };
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512 * 1024);
  pthread_t thread;
  const bool made = pthread_create(&thread, &attr, &Call::run, &fn) == 0;
  pthread_attr_destroy(&attr);
  if (made) pthread_join(thread, nullptr);
  return made;
}

// std::regex backtracks by recursion, one frame per character a `.*` takes:
// before the fix this rule crashed the whole profiler (SIGSEGV) on this name.
TEST(TensorCoreRules, AUserRuleWithDotStarOverAHugeNameOnASmallStackClassifiesWithoutCrashing) {
  const auto rules = TensorCoreRules::parse(
      "simt          no   SIMT\n"
      "cutlass.*gmma yes  CUTLASS 3 GMMA\n",
      "user.txt");
  const std::string name = long_cutlass_name();
  TensorCoreClass got;
  ASSERT_TRUE(run_on_small_stack([&] { got = rules->classify(name); }));
  EXPECT_TRUE(got.uses_tensor_cores);
  EXPECT_EQ(got.family, "CUTLASS 3 GMMA");
}

// The shipped table on a name with a 1 M-character word run after `xmma_`
// (its `xmma_\w*f32...` rule recursed once a character and overflowed).
TEST(TensorCoreRules, TheShippedTableSurvivesAMillionCharacterName) {
  const auto rules = TensorCoreRules::load(TensorCoreRules::default_path());
  TensorCoreClass got;
  ASSERT_TRUE(run_on_small_stack([&] { got = rules->classify("sm90_xmma_" + std::string(1'000'000, 'a')); }));
  EXPECT_TRUE(got.uses_tensor_cores);
  EXPECT_EQ(got.family, rules->classify("sm90_xmma_gemm_kernel").family);
}

// Only the first kMaxClassifiedNameChars characters are searched, and the cut
// is not an end of line.
TEST(TensorCoreRules, OnlyTheNamesDocumentedPrefixIsSearchedAndTheCutIsNoLineEnd) {
  const auto rules = TensorCoreRules::parse(
      "hmma yes HMMA\n"
      "x$   yes ends in x\n",
      "t.txt");
  const std::string pad(TensorCoreRules::kMaxClassifiedNameChars - 4, 'x');
  EXPECT_EQ(rules->classify(pad + "hmma").family, "HMMA");  // ends exactly at the limit
  EXPECT_EQ(rules->classify(pad + "_hmma").family, "");     // one character past it
  EXPECT_EQ(rules->classify(pad + "xxxx").family, "ends in x");
  EXPECT_EQ(rules->classify(pad + "xxxx_").family, "");     // `x$` must not match at the cut
}

// Found by fuzz_tensor_core_rules with long inputs: a 23 KB pattern overflowed
// the stack while std::regex compiled it.
TEST(TensorCoreRules, AnOverlongPatternIsRefusedWithItsLineNotCompiled) {
  const std::string error = load_error("hmma yes HMMA\n(un" + std::string(30'000, 'x') + " yes long\n");
  EXPECT_EQ(error.rfind("tensor_core_kernels.txt line 2: the pattern is 30003 characters long; at most 512", 0), 0u)
      << error.substr(0, 200);
  EXPECT_NO_THROW(TensorCoreRules::parse(std::string(TensorCoreRules::kMaxPatternChars, 'x') + " yes at the limit\n", "t.txt"));
}

// What a rule means (the header): the first rule whose pattern is found
// anywhere in the name's first kMaxClassifiedNameChars characters, case-
// insensitively, with no line end at a cut. Checked against that definition
// written out with a plain std::regex_search, for the one-pass search that
// replaced it: the shipped table over the H100 fixture and kCases, and rules
// that use anchors, word boundaries, alternation and `.*`.
//
// Each rule's pattern compiled as written (no __polynomial: the plain
// definition), with the rule's family.
using PlainRules = std::vector<std::pair<std::regex, std::string>>;

PlainRules plain_rules_of(const TensorCoreRules& rules) {
  PlainRules out;
  for (const auto& rule : rules.rules())
    out.emplace_back(std::regex(rule.pattern, std::regex::ECMAScript | std::regex::icase), rule.family);
  return out;
}

std::string reference_family(const PlainRules& plain_rules, const std::string& name) {
  const size_t n = std::min(name.size(), TensorCoreRules::kMaxClassifiedNameChars);
  const auto flags = n == name.size() ? std::regex_constants::match_default : std::regex_constants::match_not_eol;
  for (const auto& [plain, family] : plain_rules)
    if (std::regex_search(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(n), plain, flags)) return family;
  return "";
}

TEST(TensorCoreRules, ClassificationIsTheFirstRuleFoundAnywhereInTheName) {
  const auto shipped = TensorCoreRules::load(TensorCoreRules::default_path());
  std::vector<std::string> names;
  for (const auto& fields : h100_fixture_rows()) names.push_back(fields.front());
  ASSERT_GE(names.size(), 20u) << "missing fixture h100-kernels.tsv";
  for (const Case& c : kCases) names.emplace_back(c.name);
  const PlainRules shipped_plain = plain_rules_of(*shipped);
  for (const std::string& name : names)
    EXPECT_EQ(shipped->classify(name).family, reference_family(shipped_plain, name)) << name;

  const auto user = TensorCoreRules::parse(
      "^void\\s+at::        no   starts with void at::\n"
      "sm90$                 yes  ends in sm90\n"
      "\\bgemm\\b             yes  the word gemm\n"
      "fp8|e4m3              yes  fp8\n"
      ".*cutlass.*gmma       yes  CUTLASS GMMA\n"
      "^$                    no   empty\n"
      "(x|xy)z               no   a group then z\n",
      "user.txt");
  const std::string long_tail(TensorCoreRules::kMaxClassifiedNameChars, 'q');
  const std::vector<std::string> probes = {
      "void at::native::gemm_kernel", "xvoid at::gemm", "kernel_sm90", "kernel_sm90_", "a gemm b", "cublas_gemm_x",
      "my_E4M3_cast", "cutlass_kernel_sm90_gmma", "gmma then cutlass", "", "xyz", "xxz", "XYZ_sm90",
      // Past the cut (the plain search of the reference is quadratic here: one such name).
      "cutlass" + long_tail + "gmma"};
  const PlainRules user_plain = plain_rules_of(*user);
  for (const std::string& name : probes)
    EXPECT_EQ(user->classify(name).family, reference_family(user_plain, name)) << name.substr(0, 80);
  EXPECT_EQ(user->classify("xvoid at::gemm").family, "the word gemm");  // `^` is still the name's start
}

// The one-pass search wraps each pattern in a group: a pattern that does not
// compile on its own must still be refused, not completed by the wrapper.
TEST(TensorCoreRules, AnUnbalancedPatternIsRefusedEvenThoughItsWrappedFormWouldCompile) {
  const std::string error = load_error("hmma yes HMMA\na)|(b yes unbalanced\n");
  EXPECT_EQ(error.rfind("tensor_core_kernels.txt line 2: bad regex 'a)|(b'", 0), 0u) << error;
}

// Found by fuzz_tensor_core_rules under UBSan: libstdc++ 12 reads a count or a
// back-reference's number with no overflow check and narrows it to int, so
// `hmma{4294967297}` compiled as `hmma{1}` and matched every HMMA kernel, and
// `\\5000...` overflowed (undefined behaviour). Refused before std::regex reads it.
TEST(TensorCoreRules, ACountOrBackReferenceTooLongForAnIntIsRefusedNotTruncated) {
  for (const std::string pattern : {"hmma{4294967297}", "hmma{1,4294967297}", "(hmma)\\4294967297",
                                    "x\\\\\\5000000000000000000000"}) {
    const std::string error = load_error("hmma yes HMMA\n" + pattern + " yes truncated\n");
    const std::string expected =
        "tensor_core_kernels.txt line 2: the pattern '" + pattern + "' has a ";
    EXPECT_EQ(error.rfind(expected, 0), 0u) << error;
    EXPECT_NE(error.find("-digit count or back-reference; at most 9 digits"), std::string::npos) << error;
  }
  // Digits std::regex reads as characters still load: a long literal number, one
  // after an escaped backslash, and a count of nine digits' length.
  const auto rules = TensorCoreRules::parse(
      "kernel_12345678901 yes literal digits\n"
      "sm\\\\1234567890 yes after a literal backslash\n"
      "(gemm){000000002} yes nine-digit count\n",
      "t.txt");
  EXPECT_EQ(rules->classify("kernel_12345678901_tn").family, "literal digits");
  EXPECT_EQ(rules->classify("sm\\1234567890").family, "after a literal backslash");
  EXPECT_EQ(rules->classify("gemm_tn").family, "");
  EXPECT_EQ(rules->classify("gemmgemm_tn").family, "nine-digit count");
}

#if defined(__GLIBCXX__)
// The non-recursive matcher has no back-references; a rule using one is
// refused at load with its line, not accepted and then crashed on.
TEST(TensorCoreRules, ABackReferenceIsRefusedAtLoad) {
  const std::string error = load_error("hmma yes HMMA\n(sm\\d+)_\\1 yes twice\n");
  EXPECT_EQ(error.rfind("tensor_core_kernels.txt line 2: bad regex '(sm\\d+)_\\1'", 0), 0u) << error;
}

// Found by fuzz_tensor_core_rules slowing down: one pass is linear in the name
// but its cost is also the states alive at once, which a counted repetition
// multiplies. `(.{1,100}){1,100}zq` took 7.8 s on one 4,096-character name.
TEST(TensorCoreRules, ARuleWhoseAutomatonIsTooLargeToSearchQuicklyIsRefusedAtLoad) {
  for (const std::string pattern :
       {"(.{1,100}){1,100}zq", ".{0,2000}gemm", "(a|b|c|d|e|f|g|h){1,100}zq"}) {
    const std::string error = load_error("hmma yes HMMA\n" + pattern + " yes costly\n");
    const std::string expected = "tensor_core_kernels.txt line 2: the pattern '" + pattern +
                                 "' is too complex (over 1000 regex states";
    EXPECT_EQ(error.rfind(expected, 0), 0u) << error;
  }
  // What a rule file reasonably holds still loads: short counts, .*, classes, a
  // literal as long as a pattern may be.
  const auto rules = TensorCoreRules::parse(
      "sm90_.{0,40}gmma yes bounded gap\n"
      "(xmma|gemm)_[a-z0-9]{2,8}_.*f16 yes classes\n" +
          std::string(TensorCoreRules::kMaxPatternChars, 'x') + " yes literal\n",
      "t.txt");
  EXPECT_EQ(rules->classify("sm90_xmma_gemm_bf16_gmma_kernel").family, "bounded gap");
  EXPECT_EQ(rules->classify("cutlass_gemm_s16816_tn_f16").family, "classes");
}
#endif

}  // namespace
}  // namespace ampscope::profiler::cupti
