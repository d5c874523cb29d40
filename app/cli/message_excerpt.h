#pragma once
// A user's value as an error message shows it: whole up to 40 characters, else
// its start and its length, so that the message stays one readable line (a
// 300,000-digit `steps` in a config file once came back as a 300 KB message).
#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace ampscope::cli {

inline std::string message_excerpt(std::string_view value) {
  constexpr size_t kShownChars = 40;
  if (value.size() <= kShownChars) return std::string(value);
  return fmt::format("{}... ({} characters)", value.substr(0, kShownChars), value.size());
}

}  // namespace ampscope::cli
