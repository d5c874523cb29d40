#include "app/cli/config_file_check.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "app/cli/message_excerpt.h"
#include "engine/errors.h"

namespace ampscope::cli {
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// The line without a trailing # comment (a # inside quotes stays).
std::string without_comment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return line.substr(0, i);
    }
  }
  return line;
}

// [+-]?(\d[\d_]*(\.\d+)?([eE][+-]?\d+)?|inf|nan), scanned in one pass: std::regex
// recursed once a digit and a 300,000-digit value crashed the CLI (SIGSEGV).
bool is_toml_number(std::string_view v) {
  if (!v.empty() && (v.front() == '+' || v.front() == '-')) v.remove_prefix(1);
  if (v == "inf" || v == "nan") return true;
  size_t i = 0;
  const auto digit_at = [&](size_t k) { return k < v.size() && v[k] >= '0' && v[k] <= '9'; };
  const auto skip_digits = [&] {
    while (digit_at(i)) ++i;
  };
  if (!digit_at(i)) return false;
  while (digit_at(i) || (i < v.size() && v[i] == '_')) ++i;
  if (i < v.size() && v[i] == '.') {
    if (!digit_at(++i)) return false;
    skip_digits();
  }
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (!digit_at(i)) return false;
    skip_digits();
  }
  return i == v.size();
}

// TOML values: a quoted string, a number, a boolean, an array (refused by the caller with
// its own message: no setting takes one).
bool is_toml_value(const std::string& v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.find(v.front(), 1) == v.size() - 1;
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') return true;
  return v == "true" || v == "false" || is_toml_number(v);
}

std::string section_names(const std::vector<CLI::App*>& commands) {
  std::string names;
  for (const auto* c : commands) names += (names.empty() ? "[" : ", [") + c->get_name() + "]";
  return names;
}

}  // namespace

void check_config_file(CLI::App& app, int argc, char** argv) {
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--" || (i == 1 && arg == "run")) return;  // what follows is not ours (a script's arguments)
    if (arg == "--config" && i + 1 < argc) path = argv[i + 1];
    else if (arg.rfind("--config=", 0) == 0) path = arg.substr(9);
  }
  if (path.empty()) return;
  const std::string where = fmt::format("--config '{}'", path);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw engine::ConfigError(fmt::format("{}: no such file", where));
  if (!S_ISREG(info.st_mode)) throw engine::ConfigError(fmt::format("{} is not a file; give the TOML file", where));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw engine::ConfigError(fmt::format("{}: cannot be read", where));

  // Sections are the commands that take flags from a file.
  const std::vector<CLI::App*> commands =
      app.get_subcommands([](CLI::App* c) { return c->get_option_no_throw("--model") != nullptr; });
  const CLI::App* section = nullptr;
  std::map<std::pair<const CLI::App*, std::string>, int> first_line_of;  // TOML defines a key once
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    // Windows editors' byte-order mark: TOML has none, and CLI11 reads it as part of a key.
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0)
      throw engine::ConfigError(fmt::format("{} starts with a UTF-8 byte-order mark (BOM), which TOML does not "
                                            "allow; save it as UTF-8 without BOM",
                                            where));
    const std::string text = trim(without_comment(line));
    if (text.empty()) continue;
    const std::string at = fmt::format("{} line {}", where, number);
    if (text.front() == '[') {
      const std::string name = trim(text.substr(1, text.find(']') == std::string::npos ? 0 : text.find(']') - 1));
      const auto found = std::find_if(commands.begin(), commands.end(), [&](auto* c) { return c->get_name() == name; });
      if (text.back() != ']' || found == commands.end())
        throw engine::ConfigError(fmt::format("{}: unknown section {}; the sections are {}", at,
                                              message_excerpt(text), section_names(commands)));
      section = *found;
      continue;
    }
    const auto equals = text.find('=');
    if (equals == std::string::npos || trim(text.substr(0, equals)).empty())
      throw engine::ConfigError(
          fmt::format("{}: not a 'key = value' line; write e.g. precision = \"bf16\" under [train]", at));
    const std::string key = trim(text.substr(0, equals));
    const std::string value = trim(text.substr(equals + 1));
    if (section == nullptr)
      throw engine::ConfigError(fmt::format("{}: '{}' is outside a section; put it under one of {}", at,
                                            message_excerpt(key),
                                            section_names(commands)));
    if (section->get_option_no_throw("--" + key) == nullptr) {
      std::string dashed = key;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      const bool close = dashed != key && section->get_option_no_throw("--" + dashed) != nullptr;
      throw engine::ConfigError(fmt::format("{}: [{}] has no setting '{}'{}", at, section->get_name(),
                                            message_excerpt(key),
                                            close ? fmt::format("; write '{}'", dashed)
                                                  : fmt::format(" (see ampscope {} --help)", section->get_name())));
    }
    if (const auto [it, first] = first_line_of.emplace(std::pair{section, key}, number); !first)
      throw engine::ConfigError(fmt::format("{}: '{}' is set twice in [{}] (first on line {}); keep one",
                                            at, message_excerpt(key), section->get_name(), it->second));
    if (!is_toml_value(value))
      throw engine::ConfigError(fmt::format("{}: {} = {} is not a TOML value; quote text and write numbers "
                                            "as they are (precision = \"bf16\", steps = 100)",
                                            at, message_excerpt(key), message_excerpt(value)));
    // Every setting takes one value (a list is one comma-separated string, as on the
    // command line), and CLI11 2.1's reader dereferences the empty value list of
    // `model = []`: SIGSEGV, found by fuzz_toml_config. Arrays are refused whole.
    if (value.front() == '[')
      throw engine::ConfigError(fmt::format("{}: {} = {} is an array; each setting takes one value, and a "
                                            "list is one string (precisions = \"fp32,bf16\")",
                                            at, message_excerpt(key), message_excerpt(value)));
  }
}

}  // namespace ampscope::cli
