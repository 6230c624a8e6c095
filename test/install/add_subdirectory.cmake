# A user project that takes kube's source tree into its own build with
# FetchContent (SOURCE_DIR: the same path as add_subdirectory; a user names a
# URL or Git tag there) configures, and a TU of it that uses the typed client
# compiles against the targets that brings in. The libraries themselves are
# compiled as in the build under test, so they are not built again here.
foreach(v KUBE_SOURCE_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER)
  if(NOT ${v})
    message(FATAL_ERROR "add_subdirectory test: ${v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/src)
file(COPY ${CONSUMER_SOURCE_DIR}/api_pod.cpp DESTINATION ${WORK_DIR}/src)
file(WRITE ${WORK_DIR}/src/CMakeLists.txt "
cmake_minimum_required(VERSION 3.25)
project(kube_subdir_consumer LANGUAGES CXX)
include(FetchContent)
FetchContent_Declare(kube SOURCE_DIR \"${KUBE_SOURCE_DIR}\")
FetchContent_MakeAvailable(kube)
foreach(t kube::kube kube::k8s kube::informer kube::controller kube::workqueue kube::prometheus)
  if(NOT TARGET \${t})
    message(FATAL_ERROR \"FetchContent(kube) did not define \${t}\")
  endif()
endforeach()
if(KUBE_BUILD_TESTS OR KUBE_BUILD_SAMPLES)
  message(FATAL_ERROR \"kube's tests or samples are on in a project that is not kube\")
endif()
add_executable(consumer_api_pod api_pod.cpp)
target_link_libraries(consumer_api_pod PRIVATE kube::k8s kube::controller)
")
# The prefixes in the environment (':'-separated), as run.cmake passes them:
# a ';' in a -D argument would split it.
execute_process(COMMAND ${CMAKE_COMMAND} -E env "CMAKE_PREFIX_PATH=${PREFIX_PATH}"
    ${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" ${EXTRA_ARGS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "add_subdirectory test: configuring a project that takes kube in with FetchContent failed (${rc})")
endif()
# The consumer's TU needs the generated headers, made by a build step of
# kube::k8s. Ninja would first build what kube::k8s links (kube's libraries),
# so the two commands that matter are taken from the build and run alone: the
# generator's, then the TU's compile ("ninja -t commands T" lists the commands
# that make T, T's own last).
function(run_last_command_of target what)
  execute_process(COMMAND ninja -C ${WORK_DIR}/build -t commands ${target}
    OUTPUT_VARIABLE commands RESULT_VARIABLE rc)
  string(STRIP "${commands}" commands)
  string(REGEX REPLACE ".*\n" "" command "${commands}")
  if(NOT rc EQUAL 0 OR command STREQUAL "")
    message(FATAL_ERROR "add_subdirectory test: no command for ${what} (${rc})")
  endif()
  execute_process(COMMAND sh -c "${command}" WORKING_DIRECTORY ${WORK_DIR}/build RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "add_subdirectory test: ${what} failed (${rc}): ${command}")
  endif()
endfunction()
run_last_command_of(_deps/kube-build/codegen/generated/include/kube/k8s/core/v1/pod.hpp "generating kube's types")
run_last_command_of(CMakeFiles/consumer_api_pod.dir/api_pod.cpp.o "compiling the consumer's TU")
