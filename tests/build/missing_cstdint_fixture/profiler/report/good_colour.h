// Fixture: includes <cstdint> itself, so the check must not list it.
#pragma once
#include <cstdint>
#include <string>

std::string css_colour_ok(std::uint32_t rgb);
