# Warnings, ccache and sanitizers for every ampscope target.
find_program(AMPSCOPE_CCACHE ccache)
if(AMPSCOPE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # Precompiled headers change the compiler's input in ways ccache must be told to accept.
  set(CMAKE_CXX_COMPILER_LAUNCHER "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;${AMPSCOPE_CCACHE}")
endif()

add_library(ampscope_warnings INTERFACE)
target_compile_options(ampscope_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)

if(AMPSCOPE_SANITIZER)
  string(REPLACE "," ";" _sanitizers "${AMPSCOPE_SANITIZER}")
  foreach(s IN LISTS _sanitizers)
    add_compile_options(-fsanitize=${s})
    add_link_options(-fsanitize=${s})
  endforeach()
  add_compile_options(-fno-omit-frame-pointer)
endif()
