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
  # UBSan's default is to print a report and carry on. A fuzzer then keeps running
  # with the report in a worker's log (which fork mode deletes) and saves no input,
  # and a test passes: every undefined behaviour stops the program instead.
  if("undefined" IN_LIST _sanitizers)
    add_compile_options(-fno-sanitize-recover=undefined)
    add_link_options(-fno-sanitize-recover=undefined)
  endif()
endif()

# libFuzzer: coverage instrumentation everywhere, the fuzzer's main only in the fuzz_* programs.
if(AMPSCOPE_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "AMPSCOPE_BUILD_FUZZERS needs clang for libFuzzer: use the fuzz preset "
                        "(cmake --preset fuzz), or -DCMAKE_CXX_COMPILER=clang++ (apt-get install clang)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
