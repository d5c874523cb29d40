// The bad-input table of docs/bad-input.md is this test: each row's command runs as
// written there (placeholders filled in), after the generator keyed by its id wrote the
// broken input, and must end with the row's exit code and message. A row without a
// generator, or a generator without a row, fails: the document and the test cannot drift.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "tests/cli/bad_input_files.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

namespace fs = std::filesystem;
using namespace ampscope::test::bad_input;
using ampscope::test::CliResult;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

// The machine's memory (MemTotal), 0 where /proc/meminfo cannot tell.
uintmax_t host_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uintmax_t kib = 0;
  while (meminfo >> key >> kib)
    if (key == "MemTotal:") return kib * 1024;
    else meminfo.ignore(256, '\n');
  return 0;
}

// ---- the table --------------------------------------------------------------

struct Row {
  std::string id, what, command, message;
  int exit_code = -1;
  int line = 0;
};

std::string unquote(std::string cell) {
  cell = std::regex_replace(cell, std::regex(R"(\\\|)"), "|");
  const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
  cell = first == std::string::npos ? "" : cell.substr(first, last - first + 1);
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') cell = cell.substr(1, cell.size() - 2);
  return cell;
}

// Cells split at '|' that markdown does not escape.
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|' && line[i - 1] != '\\') {
      cells.push_back(unquote(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

const fs::path kTablePath = ampscope::test::test_source_path("../docs/bad-input.md");

// Rows are the table lines whose first cell is a case id in backticks.
std::vector<Row> read_table() {
  std::vector<Row> rows;
  std::ifstream in(kTablePath);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("| `", 0) != 0) continue;
    const auto cells = cells_of(line);
    Row row;
    row.line = number;
    if (cells.size() == 5) {
      row.id = cells[0];
      row.what = cells[1];
      row.command = cells[2];
      row.exit_code = std::atoi(cells[3].c_str());
      row.message = cells[4];
    } else {
      row.id = cells.empty() ? "?" : cells[0];  // reported by the table check below
    }
    rows.push_back(row);
  }
  return rows;
}

// ---- placeholders -----------------------------------------------------------

constexpr const char* kTiny = "--model mlp --device cpu --width 16 --batch-size 8 --synthetic-samples 64";
constexpr const char* kTinyGpt = "--model gpt --device cpu --width 16 --heads 2 --layers 1 --seq-len 8 --batch-size 4";

// A session recorded by the command under test, once per process; cases only read it.
const std::string& recorded_session() {
  static ScratchDir dir;
  static const std::string path = [] {
    const std::string p = (dir / "recorded.ampscope").string();
    const CliResult r = ampscope::test::ampscope(fmt::format("profile {} --steps 2 --quiet --out '{}'", kTiny, p));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return p;
  }();
  return path;
}

std::string fill(std::string text, const fs::path& tmp) {
  const std::pair<std::string, std::function<std::string()>> placeholders[] = {
      {"{tmp}", [&] { return tmp.string(); }},
      {"{tiny}", [] { return std::string(kTiny); }},
      {"{tinygpt}", [] { return std::string(kTinyGpt); }},
      {"{session}", [] { return recorded_session(); }},
      {"{long}", [] { return std::string(5000, 'w'); }},
  };
  for (const auto& [name, value] : placeholders) {
    for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at)) {
      const std::string v = value();
      text.replace(at, name.size(), v);
      at += v.size();
    }
  }
  return text;
}

// ---- generators, keyed by case id -------------------------------------------

// What a case needs besides its files: a signal sent once `ready` holds (the run then
// goes in the background), and checks after the run.
struct Plan {
  int signal = 0;
  std::function<bool(const fs::path& tmp)> ready;
  std::function<void(const fs::path& tmp)> after;
  std::chrono::seconds exit_within{120};  // after the signal
  rlim_t file_size_limit = 0;             // bytes (RLIMIT_FSIZE, `ulimit -f`) for the command; 0 = none
};
using Generator = std::function<Plan(const fs::path& tmp)>;

Plan nothing(const fs::path&) { return {}; }

// A refused command leaves no output behind.
Plan writes_nothing_to(const std::string& name) {
  Plan plan;
  plan.after = [name](const fs::path& tmp) { EXPECT_FALSE(fs::exists(tmp / name)) << name; };
  return plan;
}
Generator writes_nothing(const std::string& name) {
  return [name](const fs::path&) { return writes_nothing_to(name); };
}

Generator file(const std::string& name, const std::string& bytes) {
  return [=](const fs::path& tmp) {
    write_file(tmp / name, bytes);
    return Plan{};
  };
}

Generator directory(const std::string& name) {
  return [=](const fs::path& tmp) {
    fs::create_directories(tmp / name);
    return Plan{};
  };
}

Generator torchscript(const std::string& forward, int64_t out = 10, bool with_weight = true) {
  return [=](const fs::path& tmp) {
    save_torchscript(tmp / "model.pt", forward, out, with_weight);
    return Plan{};
  };
}

// A copy of the recorded session, changed by `edit` (bytes in, bytes out).
Generator session_copy(std::function<std::string(std::string)> edit) {
  return [=](const fs::path& tmp) {
    write_file(tmp / "s.ampscope", edit(read_bytes(recorded_session())));
    return Plan{};
  };
}

size_t committed_steps(const fs::path& path) {
  try {
    return ampscope::profiler::SessionReader::open(path.string()).steps().size();
  } catch (const std::exception&) {
    return 0;  // not there yet
  }
}

size_t lines_in(const fs::path& path) {
  const std::string text = read_bytes(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A profile run stopped by `sig` after 3 committed steps keeps them, marked stopped.
Plan stopped_profile(int sig) {
  Plan plan;
  plan.signal = sig;
  plan.ready = [](const fs::path& tmp) { return committed_steps(tmp / "p.ampscope") >= 3; };
  plan.after = [](const fs::path& tmp) {
    const auto session = ampscope::profiler::SessionReader::open((tmp / "p.ampscope").string());
    EXPECT_GE(session.steps().size(), 3u);
    EXPECT_EQ(session.meta_value("final_state").value_or("(none)"), "stopped");
  };
  return plan;
}

// A run stopped by `sig` in the middle of a step that would take hours (10^8 micro-batches
// or validation batches) ends within `exit_within`; a profile run's session is closed.
Plan stopped_inside_a_step(int sig) {
  Plan plan;
  plan.signal = sig;
  plan.exit_within = std::chrono::seconds(10);
  // The run printed its start: the signal handlers are in place and the first step is on.
  plan.ready = [](const fs::path& tmp) { return read_bytes(tmp / "log.txt").find("model  ") != std::string::npos; };
  plan.after = [](const fs::path& tmp) {
    if (!fs::exists(tmp / "p.ampscope")) return;  // train: no session
    const auto session = ampscope::profiler::SessionReader::open((tmp / "p.ampscope").string());
    EXPECT_EQ(session.meta_value("final_state").value_or("(none)"), "stopped");
    // The unfinished step's ops (millions: 28.7 s to store) are counted, not kept.
    EXPECT_EQ(session.meta_value("interrupted_step").value_or("(none)"), "1");
    EXPECT_EQ(session.op_count(), 0);
  };
  return plan;
}

// A profile run recording {tmp}/live.ampscope while the case's command runs; the
// command must leave it alone: afterwards it still records, and stops cleanly.
Plan live_session(const fs::path& tmp) {
  const fs::path path = tmp / "live.ampscope";
  auto run = std::make_shared<ampscope::test::BackgroundCli>(
      fmt::format("profile {} --steps 1000000 --quiet --out '{}'", kTiny, path.string()), tmp / "live-log.txt");
  EXPECT_TRUE(ampscope::test::wait_for_condition([&] { return committed_steps(path) >= 3; }));
  Plan plan;
  plan.after = [run, path](const fs::path&) {
    const size_t steps_before = committed_steps(path);
    EXPECT_TRUE(ampscope::test::wait_for_condition([&] { return committed_steps(path) > steps_before; }))
        << "the first run no longer records its session";
    EXPECT_TRUE(run->signal(SIGTERM));
    EXPECT_EQ(run->wait_exit(), 0);
    const auto session = ampscope::profiler::SessionReader::open(path.string());
    EXPECT_EQ(session.meta_value("final_state").value_or("(none)"), "stopped");
  };
  return plan;
}

// A copy of the recorded session, in {tmp}/s.ampscope, whose step 1 has `loss` (SQL).
Generator session_with_loss(const std::string& loss) {
  return [=](const fs::path& tmp) {
    const fs::path path = tmp / "s.ampscope";
    write_file(path, read_bytes(recorded_session()));
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.string().c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, ("UPDATE steps SET loss=" + loss + " WHERE step=1").c_str(), nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    return Plan{};
  };
}

// The session of a profile run killed with SIGKILL after 3 committed steps, in {tmp}/killed.ampscope.
void record_killed_session(const fs::path& tmp) {
  const fs::path path = tmp / "killed.ampscope";
  ampscope::test::BackgroundCli run(fmt::format("profile {} --steps 1000000 --quiet --out '{}'", kTiny, path.string()),
                                    tmp / "killed-log.txt");
  EXPECT_TRUE(ampscope::test::wait_for_condition([&] { return committed_steps(path) >= 3; }));
  EXPECT_TRUE(run.signal(SIGKILL));
  EXPECT_EQ(run.wait_exit(), 128 + SIGKILL);
}

// A write that failed leaves no temporary file beside its output, nor the output itself
// (`absent`, when the write goes through a temporary file).
Plan no_temporary_file(rlim_t file_size_limit, const std::string& absent = "") {
  Plan plan;
  plan.file_size_limit = file_size_limit;
  plan.after = [absent](const fs::path& tmp) {
    for (const fs::path& folder : {tmp, fs::path("/dev")}) {
      for (const auto& entry : fs::directory_iterator(folder)) {
        EXPECT_NE(entry.path().extension(), ".tmp") << "a temporary file was left: " << entry.path();
      }
    }
    if (!absent.empty()) {
      EXPECT_FALSE(fs::exists(tmp / absent)) << absent;
    }
  };
  return plan;
}
Generator failed_write(rlim_t file_size_limit = 0, const std::string& absent = "") {
  return [=](const fs::path&) { return no_temporary_file(file_size_limit, absent); };
}

const std::string kCsvHeader = "a,b,label\n";
const std::string kWeightForward = "def forward(self, x):\n    return torch.matmul(x, self.weight.t())\n";

// The file says nothing about which commands a config file is for; this one is for train.
const std::string kGoodConfig =
    "# a run\n[train]\nmodel = \"mlp\"  # inline comments are fine\ndevice = \"cpu\"\nwidth = 16\n"
    "batch-size = 8\nsynthetic-samples = 64\nsteps = 2\n";

const std::map<std::string, Generator>& generators() {
  static const std::map<std::string, Generator> g = {
      // nothing wrong
      {"ok-train", nothing},
      {"ok-profile", nothing},
      {"ok-summary", nothing},
      {"ok-export", nothing},
      {"ok-report", nothing},
      {"ok-config", file("run.toml", kGoodConfig)},
      // data files
      {"data-mnist-missing", nothing},
      {"data-mnist-directory", directory("train-images-idx3-ubyte")},
      {"data-mnist-empty", file("train-images-idx3-ubyte", "")},
      {"data-mnist-truncated", file("train-images-idx3-ubyte", idx_images(10, 4, 4, 5 * 16))},
      {"data-mnist-wrong-magic", file("train-images-idx3-ubyte", idx_images(4, 4, 4, 4 * 16, 0x12345678))},
      {"data-mnist-labels-as-images", file("train-images-idx3-ubyte", idx_labels("\1\2\3\4\5\6\7\1"))},
      {"data-mnist-no-images", file("train-images-idx3-ubyte", idx_images(0, 4, 4, 0))},
      {"data-mnist-labels-missing", file("train-images-idx3-ubyte", idx_images(4, 4, 4, 4 * 16))},
      {"data-mnist-count-mismatch", [](const fs::path& tmp) { mnist_pair(tmp, 4, "\1\2\3"); return Plan{}; }},
      {"data-mnist-label-out-of-range", [](const fs::path& tmp) { mnist_pair(tmp, 3, "\1\14\3"); return Plan{}; }},
      {"data-mnist-unknown-labels-name", file("digits.idx", idx_images(4, 4, 4, 4 * 16))},
      {"data-cifar-missing", nothing},
      {"data-cifar-no-batches", directory("cifar-10-batches-bin")},
      {"data-cifar-truncated", file("data_batch_1.bin", cifar_records(2, 3) + std::string(1000, '\0'))},
      {"data-cifar-100", file("train.bin", std::string(2 * (kCifarRecord + 1), '\1'))},
      {"data-cifar-label-out-of-range", file("data_batch_1.bin", cifar_records(2, 10))},
      {"data-csv-missing", nothing},
      {"data-csv-empty", file("train.csv", "")},
      {"data-csv-header-only", file("train.csv", kCsvHeader)},
      {"data-csv-not-a-number", file("train.csv", kCsvHeader + "1,2,0\n3,abc,1\n")},
      {"data-csv-not-finite", file("train.csv", kCsvHeader + "1,2,0\n3,inf,1\n")},
      {"data-csv-ragged", file("train.csv", kCsvHeader + "1,2,0\n3,1\n")},
      {"data-csv-one-column", file("train.csv", "label\n0\n1\n")},
      {"data-csv-target-out-of-range", file("train.csv", kCsvHeader + "1,2,0\n3,4,1\n")},
      {"data-csv-target-negative", file("train.csv", kCsvHeader + "1,2,0\n3,4,1\n")},
      {"data-compare-missing", nothing},
      {"data-text-missing", nothing},
      {"data-text-empty", file("corpus.txt", "")},
      {"data-text-too-short", file("corpus.txt", "hello")},
      {"data-text-for-mlp", file("corpus.txt", std::string(200, 'a') + std::string(200, 'b'))},
      {"data-kind-given-a-path", nothing},
      {"data-path-without-kind", file("train.csv", kCsvHeader + "1,2,0\n")},
      {"data-kind-without-path", nothing},
      // model files
      {"model-ts-missing", nothing},
      {"model-ts-directory", directory("model.pt")},
      {"model-ts-garbage", file("model.pt", "this is not what you think it is\n")},
      {"model-ts-empty", file("model.pt", "")},
      {"model-ts-truncated", [](const fs::path& tmp) {
         save_torchscript(tmp / "whole.pt", kWeightForward);
         const std::string whole = read_bytes(tmp / "whole.pt");
         write_file(tmp / "model.pt", whole.substr(0, whole.size() / 2));
         return Plan{};
       }},
      {"model-ts-output-does-not-fit", torchscript(kWeightForward, 3)},
      {"model-ts-input-does-not-fit", [](const fs::path& tmp) {
         torch::jit::Module m("__torch__.BadInputModel");
         m.register_parameter("weight", torch::randn({10, 5}).requires_grad_(), false);
         m.define(kWeightForward);
         m.save((tmp / "model.pt").string());
         return Plan{};
       }},
      {"model-ts-returns-tuple",
       torchscript("def forward(self, x):\n    y = torch.matmul(x, self.weight.t())\n    return (y, y)\n")},
      {"model-ts-no-parameters", torchscript("def forward(self, x):\n    return x[:, :10] * 2.0\n", 10, false)},
      {"model-ts-without-file", nothing},
      {"model-ts-without-kind", torchscript(kWeightForward)},
      // flags
      {"flag-no-command", nothing},
      {"flag-unknown-command", nothing},
      {"flag-unknown", nothing},
      {"flag-not-a-number", nothing},
      {"flag-too-big-a-number", nothing},
      {"flag-steps-zero", nothing},
      {"flag-batch-size-negative", nothing},
      {"flag-lr-nan", nothing},
      {"flag-lr-diverges", nothing},
      {"flag-unknown-precision", nothing},
      {"flag-unknown-attention", nothing},
      {"flag-scaler-contradiction", nothing},
      {"flag-scaler-setting-without-scaler", nothing},
      {"flag-scaler-on-fp32", nothing},
      {"flag-heads-do-not-divide-width", nothing},
      {"flag-attention-not-gpt", nothing},
      {"flag-channels-last-not-convnet", nothing},
      {"flag-momentum-not-sgd", nothing},
      {"flag-warmup-without-cosine", nothing},
      {"flag-min-lr-ratio-above-one", nothing},
      {"flag-eval-every-negative", nothing},
      {"flag-profile-every-zero", nothing},
      {"flag-compare-unknown-precision", writes_nothing("c.ampscope")},
      {"flag-compare-tf32-on-cpu", writes_nothing("c.ampscope")},
      {"flag-compare-warmup-too-long", writes_nothing("c.ampscope")},
      {"flag-compare-repeats-zero", writes_nothing("c.ampscope")},
      {"flag-compare-precision-singular", writes_nothing("c.ampscope")},
      {"flag-summary-no-session", nothing},
      {"flag-summary-top-negative", nothing},
      {"flag-export-unknown-format", nothing},
      {"flag-export-steps-reversed", nothing},
      {"flag-run-without-script", nothing},
      {"flag-run-compare-unknown", nothing},
      {"flag-run-compare-warmup", nothing},
      {"flag-run-compare-precision", nothing},
      // config files
      {"config-missing", nothing},
      {"config-directory", directory("run.toml")},
      {"config-not-toml", file("run.toml", "[train]\nsteps = = 3\n")},
      {"config-unterminated-array", file("run.toml", "[train]\nmodel =[t")},
      {"config-empty-array", file("run.toml", "[train]\nmodel = []\n")},
      {"config-array-value", file("run.toml", "[compare]\nprecisions = [\"fp32\", \"bf16\"]\n")},
      {"config-huge-number", file("run.toml", "[train]\nsteps = " + std::string(300'000, '1') + "\n")},
      {"config-huge-key", file("run.toml", "[train]\n" + std::string(100'000, 'k') + " = 3\n")},
      {"config-bom", file("run.toml", "\xEF\xBB\xBF[train]\nsteps = 2\n")},
      {"config-duplicate-key", file("run.toml", "[train]\nsteps = 2\nsteps = 3\n")},
      {"config-not-key-value", file("run.toml", "[train]\nprecision bf16\n")},
      {"flag-huge-model-name", nothing},
      {"flag-huge-steps-word", nothing},
      {"config-huge-string", file("run.toml", "[train]\nsteps = \"" + std::string(5000, 's') + "\"\n")},
      {"config-unknown-key", file("run.toml", "[train]\nstepz = 3\n")},
      {"config-underscore-key", file("run.toml", "[train]\ninit_scale = 1024\n")},
      {"config-unknown-section", file("run.toml", "[trian]\nsteps = 3\n")},
      {"config-outside-section", file("run.toml", "steps = 3\n")},
      {"config-wrong-type", file("run.toml", "[train]\nsteps = \"many\"\n")},
      {"config-bad-value", file("run.toml", "[train]\nprecision = \"fp8\"\n")},
      // session files
      {"session-missing", nothing},
      {"session-missing-diff", nothing},
      {"session-not-sqlite", file("s.ampscope", "this is not what you think it is\n")},
      {"session-not-sqlite-report", file("s.ampscope", "this is not what you think it is\n")},
      {"session-empty", file("s.ampscope", "")},
      {"session-directory", directory("s.ampscope")},
      {"session-truncated", session_copy([](std::string s) { return s.substr(0, s.size() / 2); })},
      {"session-header-only", session_copy([](std::string s) { return s.substr(0, 50); })},
      {"session-newer-format", session_copy([](std::string s) { return s.replace(60, 4, be32(99)); })},
      {"session-other-sqlite", session_copy([](std::string s) { return s.replace(68, 4, be32(7)); })},
      {"session-corrupt-pages", session_copy([](std::string s) {
         const size_t page = 4096;  // the first page (the schema) stays; every other is garbage
         return s.replace(page, s.size() - page, std::string(s.size() - page, '\xff'));
       })},
      {"session-rank-missing", nothing},
      {"session-value-text", session_with_loss("'abc'")},
      {"session-value-blob", session_with_loss("x'00ff'")},
      {"session-not-closed-report", [](const fs::path& tmp) {
         record_killed_session(tmp);
         Plan plan;
         plan.after = [](const fs::path& t) {
           EXPECT_NE(read_bytes(t / "r.html").find("the session was not closed"), std::string::npos);
         };
         return plan;
       }},
      {"session-not-closed-export", [](const fs::path& tmp) {
         record_killed_session(tmp);
         return Plan{};
       }},
      // output locations
      {"out-profile-exists", [](const fs::path& tmp) {
         write_file(tmp / "p.ampscope", "precious");
         Plan plan;
         plan.after = [](const fs::path& t) { EXPECT_EQ(read_bytes(t / "p.ampscope"), "precious"); };
         return plan;
       }},
      {"out-profile-directory", directory("runs")},
      {"out-profile-no-directory", nothing},
      {"out-profile-parent-is-file", file("runs", "")},
      {"out-compare-exists", file("c.ampscope", "precious")},
      {"out-compare-no-directory", nothing},
      {"out-report-exists", file("r.html", "precious")},
      {"out-diff-html-exists", file("r.html", "precious")},
      {"out-report-directory", directory("r.html")},
      {"out-report-no-directory", nothing},
      {"out-report-own-input", session_copy([](std::string s) { return s; })},
      {"out-export-no-directory", nothing},
      {"out-export-csv-no-directory", nothing},
      {"out-export-tensorboard-is-file", file("tb", "")},
      {"out-train-metrics-no-directory", nothing},
      {"out-train-metrics-exists", [](const fs::path& tmp) {
         write_file(tmp / "m.jsonl", "precious");
         Plan plan;
         plan.after = [](const fs::path& t) { EXPECT_EQ(read_bytes(t / "m.jsonl"), "precious"); };
         return plan;
       }},
      {"out-export-own-input", [](const fs::path& tmp) {
         write_file(tmp / "s.ampscope", read_bytes(recorded_session()));
         Plan plan;
         plan.after = [](const fs::path& t) { EXPECT_EQ(committed_steps(t / "s.ampscope"), 2u); };
         return plan;
       }},
      {"out-export-exists", [](const fs::path& tmp) {
         write_file(tmp / "s.json", "precious");
         Plan plan;
         plan.after = [](const fs::path& t) { EXPECT_EQ(read_bytes(t / "s.json"), "precious"); };
         return plan;
       }},
      {"out-profile-own-data", file("train.csv", "a,b,y\n1,2,0\n3,4,1\n")},
      {"out-train-metrics-own-data", file("train.csv", "a,b,y\n1,2,0\n3,4,1\n")},
      {"out-profile-not-a-session", [](const fs::path& tmp) {
         write_file(tmp / "train.py", "print('precious')\n");
         Plan plan;
         plan.after = [](const fs::path& t) { EXPECT_EQ(read_bytes(t / "train.py"), "print('precious')\n"); };
         return plan;
       }},
      {"out-profile-empty", nothing},
      {"out-profile-live-session", live_session},
      {"out-export-live-session", live_session},
      {"out-report-live-session", live_session},
      // failed writes
      {"write-report-dev-full", failed_write()},
      {"write-export-dev-full", failed_write()},
      {"write-train-metrics-dev-full", failed_write()},
      {"write-report-file-size-limit", failed_write(4 * 1024, "r.html")},
      {"write-export-file-size-limit", failed_write(1024)},
      {"write-train-metrics-file-size-limit", failed_write(4 * 1024)},
      {"write-profile-file-size-limit", failed_write(64 * 1024)},
      // signals
      {"signal-train-sigint", [](const fs::path&) {
         Plan plan;
         plan.signal = SIGINT;
         plan.ready = [](const fs::path& tmp) { return lines_in(tmp / "m.jsonl") >= 3; };
         return plan;
       }},
      {"signal-profile-sigint", [](const fs::path&) { return stopped_profile(SIGINT); }},
      {"signal-profile-sigterm", [](const fs::path&) { return stopped_profile(SIGTERM); }},
      {"signal-compare-sigint", [](const fs::path&) {
         Plan plan;
         plan.signal = SIGINT;
         plan.ready = [](const fs::path& tmp) {
           try {
             return ampscope::profiler::is_comparison_file((tmp / "c.ampscope").string());
           } catch (const std::exception&) {
             return false;
           }
         };
         plan.after = [](const fs::path& tmp) {
           EXPECT_NO_THROW(ampscope::profiler::read_comparison((tmp / "c.ampscope").string()));
         };
         return plan;
       }},
      {"signal-sigkill-session", [](const fs::path& tmp) {
         record_killed_session(tmp);
         Plan plan;
         plan.after = [](const fs::path& t) { EXPECT_GE(committed_steps(t / "killed.ampscope"), 3u); };
         return plan;
       }},
      {"signal-profile-sigterm-accumulate", [](const fs::path&) { return stopped_inside_a_step(SIGTERM); }},
      {"signal-train-sigterm-eval", [](const fs::path&) { return stopped_inside_a_step(SIGTERM); }},
      {"signal-train-sigint-accumulate", [](const fs::path&) { return stopped_inside_a_step(SIGINT); }},
      // resource exhaustion
      {"mem-mlp-width", nothing},
      {"mem-mlp-layers", nothing},
      {"mem-gpt-width", nothing},
      {"mem-gpt-seq-len", nothing},
      {"mem-batch-size", nothing},
      {"mem-data-file-too-big", [](const fs::path& tmp) {
         write_file(tmp / "data_batch_1.bin", "");
         // Sparse (no disk taken), and beyond this machine's memory whatever it has: 101 GB
         // fit the 128 GB of a GPU machine, which then read it whole until the test timed out.
         const auto records = std::max<uintmax_t>(33'000'000, 2 * host_memory_bytes() / kCifarRecord);
         fs::resize_file(tmp / "data_batch_1.bin", kCifarRecord * records);
         return Plan{};
       }},
      {"mem-vocab-size", nothing},
  };
  return g;
}

// ---- the checks -------------------------------------------------------------

TEST(BadInputTable, EveryRowHasAGeneratorAndEveryGeneratorARow) {
  const auto rows = read_table();
  ASSERT_GE(rows.size(), 50u) << kTablePath;
  std::set<std::string> ids;
  for (const auto& row : rows) {
    SCOPED_TRACE(fmt::format("{}:{} {}", kTablePath.string(), row.line, row.id));
    EXPECT_TRUE(ids.insert(row.id).second) << "the id is used twice";
    EXPECT_TRUE(generators().count(row.id)) << "a row without a generator";
    EXPECT_TRUE(row.exit_code == 0 || row.exit_code == 1 || row.exit_code == 2) << "exit code " << row.exit_code;
    EXPECT_EQ(row.command.rfind("ampscope", 0), 0u) << row.command;
    EXPECT_FALSE(row.message.empty());
  }
  for (const auto& [id, generator] : generators()) EXPECT_TRUE(ids.count(id)) << id << ": a generator without a row";
}

int count_lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n')) + (!text.empty() && text.back() != '\n');
}

void PrintTo(const Row& row, std::ostream* out) { *out << row.id; }

class BadInput : public ::testing::TestWithParam<Row> {};

TEST_P(BadInput, EndsWithTheDocumentedCodeAndMessage) {
  const Row& row = GetParam();
  SCOPED_TRACE(fmt::format("{}:{} {}", kTablePath.string(), row.line, row.id));
  const auto generator = generators().find(row.id);
  ASSERT_NE(generator, generators().end()) << "no generator for this row";
#if !defined(AMPSCOPE_HAVE_TENSORBOARD)
  if (row.command.find("tensorboard") != std::string::npos) GTEST_SKIP() << "this build has no TensorBoard output";
#endif
  ScratchDir tmp;
  const Plan plan = generator->second(tmp.path());
  ASSERT_EQ(row.command.rfind("ampscope", 0), 0u);
  const std::string args = fill(row.command.substr(std::min(row.command.size(), std::string("ampscope ").size())), tmp.path());
  const std::string message = fill(row.message, tmp.path());

  CliResult r;
  if (plan.file_size_limit > 0) {
    // The command (and the shell that starts it) inherits the limit; this process writes
    // nothing meanwhile.
    rlimit old {};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
    rlimit limited = old;
    limited.rlim_cur = plan.file_size_limit;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
    r = ampscope::test::ampscope(args);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  } else if (plan.signal == 0) {
    r = ampscope::test::ampscope(args);
  } else {
    ampscope::test::BackgroundCli run(args, tmp / "log.txt");
    ASSERT_TRUE(run.started());
    ASSERT_TRUE(ampscope::test::wait_for_condition([&] { return plan.ready(tmp.path()); }))
        << "the run never got where the signal was due: " << read_bytes(tmp / "log.txt");
    ASSERT_TRUE(run.signal(plan.signal));
    const auto code = run.wait_exit(plan.exit_within);
    ASSERT_TRUE(code.has_value()) << "the run did not end within " << plan.exit_within.count() << " s of the signal";
    r = {*code, read_bytes(tmp / "log.txt")};
  }

  EXPECT_EQ(r.exit_code, row.exit_code) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << "expected: " << message << "\n" << args << "\n" << r.output;
  if (row.exit_code == 2) {
    // Nothing ran: the whole output is the one-line message, short enough to read.
    EXPECT_EQ(count_lines(r.output), 1) << r.output;
    EXPECT_LE(r.output.size(), 400u) << r.output.substr(0, 400);
    EXPECT_EQ(r.output.rfind("ampscope: error: ", 0), 0u) << r.output;
  }
  if (row.exit_code == 1) {
    EXPECT_NE(r.output.find("ampscope: error: " ), std::string::npos) << r.output;
    EXPECT_EQ(count_lines(message), 1);
  }
  for (const char* crash : {"terminate called", "Segmentation", "Aborted", "Exception raised from", "core dumped"})
    EXPECT_EQ(r.output.find(crash), std::string::npos) << crash << ":\n" << r.output;
  // Every error line is one line that starts like the others.
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("error") != std::string::npos && line.find("ampscope: error: ") == std::string::npos)
      ADD_FAILURE() << "an error line not in the house style: " << line;
  if (plan.after) plan.after(tmp.path());
}

std::string test_name(const ::testing::TestParamInfo<Row>& info) {
  std::string name = info.param.id;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Docs, BadInput, ::testing::ValuesIn(read_table()), test_name);

}  // namespace
