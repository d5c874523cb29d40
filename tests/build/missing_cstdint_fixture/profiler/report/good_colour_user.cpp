// Fixture: reaches <cstdint> through a project header, so the check must not list it.
#include "profiler/report/good_colour.h"

std::string css_colour_ok(uint32_t rgb) { return std::to_string(rgb); }
