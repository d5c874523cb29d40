#pragma once
#include <string>

namespace ampscope::cli {

// `ampscope --version`: the version, and where the resource tables are read
// from with what they hold (or why they cannot be read), so a moved or
// installed tree shows at once whether it finds them.
std::string version_text();

}  // namespace ampscope::cli
