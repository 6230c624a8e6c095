# Installs the built project into a scratch prefix, then configures, builds and
# runs a consumer that uses find_package(kube), with the compiler, standard
# library and sanitizers of the build under test; checks that
# kubeConfigVersion.cmake refuses a version it is not compatible with.
foreach(v KUBE_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT ${v})
    message(FATAL_ERROR "install test: ${v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: command failed (${rc}): ${ARGN}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${KUBE_BINARY_DIR} --prefix ${prefix})
set(flags "${CXX_FLAGS}")
if(KUBE_SANITIZE)
  string(APPEND flags " -fsanitize=${KUBE_SANITIZE}")
endif()
# The prefixes as CMAKE_PREFIX_PATH in the environment (':'-separated): a ';'
# would split this command's arguments.
set(configure ${CMAKE_COMMAND} -E env "CMAKE_PREFIX_PATH=${prefix}:${PREFIX_PATH}"
  ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
  -DKUBE_SMALL_CONTROLLER_SOURCE=${SMALL_CONTROLLER_SOURCE})

# The package is 0.2.x and says SameMinorVersion: 0.1, 0.3 and 1.0 are refused.
foreach(wanted 0.1 0.3 1.0)
  execute_process(COMMAND ${configure} -B ${WORK_DIR}/build-${wanted} -DKUBE_WANTED_VERSION=${wanted}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "kubeConfig.cmake, version: ")
    message(FATAL_ERROR "install test: find_package(kube ${wanted}) was not refused by the version file (${rc}): ${err}")
  endif()
endforeach()

run(${configure} -B ${WORK_DIR}/build)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
