// `ampscope diff --html` (issue 28): the eager and the compiled run side by side as a
// page in the report's style, well-formed and self-contained, with what the text
// says: a difference marked, every module's dtypes, phases and regions.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "profiler/report/html_diff.h"
#include "tests/report/report_fixture.h"

namespace ampscope::profiler {
namespace {

EagerVsCompiled crafted_diff() {
  EagerVsCompiled d;
  ModulePrecision m;
  m.module = "blocks.0.<attn&proj>";  // escaped on the page
  m.kind = "GEMM";
  m.agreement = Agreement::kDiffers;
  m.eager.present = m.compiled.present = true;
  m.eager.operand_dtypes = m.eager.output_dtypes = {"bfloat16"};
  m.eager.decision = OpCategory::kDemoted;
  m.compiled.operand_dtypes = m.compiled.output_dtypes = {"float32"};
  d.modules.push_back(m);
  ModulePrecision same = m;
  same.module = "head";
  same.agreement = Agreement::kSame;
  same.compiled = same.eager;
  d.modules.push_back(same);
  d.same = d.differs = 1;
  d.compiled_run_has_graphs = true;
  d.eager_step_ms = 18.5;
  d.compiled_step_ms = 9.25;
  d.phases.push_back({Phase::kForward, 4.0, 2.0, 0.0, 0.0});
  d.regions.push_back({"Torch-Compiled Region: 1/0", Phase::kForward, 3, 6.1, 2091.2});
  return d;
}

TEST(DiffReport, IsAWellFormedSelfContainedPageOfTheComparison) {
  const EagerVsCompiled d = crafted_diff();
  const std::string html = render_diff_html(d, "/runs/eager.ampscope", "/runs/compiled.ampscope");
  test::expect_self_contained(html);
  EXPECT_NE(html.find("blocks.0.&lt;attn&amp;proj&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<attn&proj>"), std::string::npos);
  EXPECT_NE(html.find("<strong>differs</strong>"), std::string::npos);
  EXPECT_NE(html.find("bfloat16 \u2192 bfloat16 (demoted)"), std::string::npos);
  EXPECT_NE(html.find("1 same, 1 differ, 0 eager only, 0 compiled only"), std::string::npos);
  EXPECT_NE(html.find("2.00\u00d7"), std::string::npos) << "the step speedup";
  EXPECT_NE(html.find("2091.200 ms"), std::string::npos) << "the region's first call";
  EXPECT_NE(html.find("eager.ampscope"), std::string::npos);

  test::ScratchDir dir;
  const std::string path = (dir / "diff.html").string();
  write_diff_html(d, "eager.ampscope", "compiled.ampscope", path);
  test::expect_python_accepts(path);
}

TEST(DiffReport, SaysWhenTheSecondRunReadNoCompiledGraph) {
  EagerVsCompiled d = crafted_diff();
  d.compiled_run_has_graphs = false;
  const std::string html = render_diff_html(d, "a.ampscope", "b.ampscope");
  EXPECT_NE(html.find("no op read from a compiled graph"), std::string::npos);
}

}  // namespace
}  // namespace ampscope::profiler
