# Build habits shared by every target: ccache, warnings, sanitizers.

find_program(KUBE_CCACHE ccache)
if(KUBE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KUBE_CCACHE})
endif()

# Applied to the project's own targets only (kube_target_defaults), never to
# consumers through the exported interface.
add_library(kube_build_flags INTERFACE)
target_compile_options(kube_build_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wcast-align
  -Wunused -Woverloaded-virtual -Wimplicit-fallthrough
  # g++ 12 reports a false positive on every Asio awaitable frame (its custom
  # operator new/delete pair inlined into coroutine bodies).
  $<$<CXX_COMPILER_ID:GNU>:-Wno-mismatched-new-delete>
  # g++ 12 at -O2/-O3 reports -Wrestrict inside libstdc++'s own
  # `"literal" + std::string` (GCC bug 105329, fixed in 13), which breaks an
  # optimized build with KUBE_WERROR.
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
if(KUBE_WERROR)
  target_compile_options(kube_build_flags INTERFACE -Werror)
endif()

if(KUBE_SANITIZE)
  if(NOT KUBE_SANITIZE MATCHES "^(address,undefined|undefined,address|address|undefined|thread)$")
    message(FATAL_ERROR "KUBE_SANITIZE='${KUBE_SANITIZE}': use 'address,undefined' or 'thread'")
  endif()
  # Sanitizers must cover every TU, including the separately compiled Asio.
  add_compile_options(-fsanitize=${KUBE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  if(KUBE_SANITIZE STREQUAL "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ 12 warns that TSAN does not model atomic_thread_fence, which Asio uses.
    add_compile_options(-Wno-tsan)
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 16
     AND KUBE_SANITIZE MATCHES "undefined")
    # clang 14's -fsanitize=function cannot compile coroutines ("Cannot
    # represent a difference across sections"; clang 16 can); the other
    # UBSan checks stay.
    add_compile_options(-fno-sanitize=function)
  endif()
  add_link_options(-fsanitize=${KUBE_SANITIZE})
endif()

# KUBE_FUZZ: a build for the libFuzzer binaries of test/fuzz (Clang only).
# Every target gets libFuzzer's coverage instrumentation, so the fuzzers see
# the branches of the library code they drive, not only their own.
option(KUBE_FUZZ "Build the libFuzzer binaries of test/fuzz, with coverage instrumentation everywhere (Clang)" OFF)
if(KUBE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KUBE_FUZZ needs Clang (libFuzzer); configure with CXX=clang++-16")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

function(kube_target_defaults target)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:kube_build_flags>)
endfunction()

# kube_debug_unoptimized(target): in a Debug build, compile the target at -O0
# even when CMAKE_CXX_FLAGS_DEBUG asks for more (scripts/fuzz.sh's build uses
# -O1 for the hand-written libraries). For tests, samples, benchmarks (measured in
# Release builds only) and generated code: they are compiled more often than
# they run, and -O0 halves the time g++ spends on their coroutines and
# template instantiations.
function(kube_debug_unoptimized target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Debug>:-O0>)
endfunction()
