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

// The same for every word of a message that is not ours (CLI11's "Could not
// convert: --steps = <the whole value>"): each word over 60 characters becomes
// its excerpt.
inline std::string with_long_words_excerpted(std::string_view message) {
  constexpr size_t kLongWordChars = 60;
  std::string out;
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find(' ', start);
    if (end == std::string_view::npos) end = message.size();
    const std::string_view word = message.substr(start, end - start);
    out += word.size() > kLongWordChars ? message_excerpt(word) : std::string(word);
    if (end == message.size()) break;
    out += ' ';
    start = end + 1;
  }
  return out;
}

}  // namespace ampscope::cli
