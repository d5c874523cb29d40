#include "app/cli/config_file_check.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>

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

// The TOML values a flag can take: a quoted string, a number, a boolean, an array.
bool is_toml_value(const std::string& v) {
  static const std::regex number(R"([+-]?(\d[\d_]*(\.\d+)?([eE][+-]?\d+)?|inf|nan))");
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.find(v.front(), 1) == v.size() - 1;
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') return true;
  return v == "true" || v == "false" || std::regex_match(v, number);
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
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string text = trim(without_comment(line));
    if (text.empty()) continue;
    const std::string at = fmt::format("{} line {}", where, number);
    if (text.front() == '[') {
      const std::string name = trim(text.substr(1, text.find(']') == std::string::npos ? 0 : text.find(']') - 1));
      const auto found = std::find_if(commands.begin(), commands.end(), [&](auto* c) { return c->get_name() == name; });
      if (text.back() != ']' || found == commands.end())
        throw engine::ConfigError(fmt::format("{}: unknown section {}; the sections are {}", at,
                                              text.substr(0, 40), section_names(commands)));
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
      throw engine::ConfigError(fmt::format("{}: '{}' is outside a section; put it under one of {}", at, key,
                                            section_names(commands)));
    if (section->get_option_no_throw("--" + key) == nullptr) {
      std::string dashed = key;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      const bool close = dashed != key && section->get_option_no_throw("--" + dashed) != nullptr;
      throw engine::ConfigError(fmt::format("{}: [{}] has no setting '{}'{}", at, section->get_name(), key,
                                            close ? fmt::format("; write '{}'", dashed)
                                                  : fmt::format(" (see ampscope {} --help)", section->get_name())));
    }
    if (!is_toml_value(value))
      throw engine::ConfigError(fmt::format("{}: {} = {} is not a TOML value; quote text and write numbers "
                                            "as they are (precision = \"bf16\", steps = 100)",
                                            at, key, value.substr(0, 40)));
  }
}

}  // namespace ampscope::cli
