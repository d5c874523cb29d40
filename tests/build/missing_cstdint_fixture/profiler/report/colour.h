// Fixture for build.cstdint_check_catches_a_header_without_it: a header that names uint32_t
// but includes only <string>, as profiler/report/svg_chart.h did (g++ 13 fails on it).
#pragma once
#include <string>

std::string css_colour(uint32_t rgb);
