# The API reference: Doxygen over the public headers (docs/Doxyfile.in).
#   option KUBE_BUILD_DOCS (ON when top level): configure the `docs` target
#   when doxygen is found (scripts/install-deps.sh installs it).
#   target docs: BUILD/docs/api/html/index.html; fails on any doxygen warning.
# Sets KUBE_DOXYGEN_EXECUTABLE and KUBE_DOXYFILE (cache, internal) for the
# ctest docs.doxygen (test/CMakeLists.txt). Included from test/ and from the
# top level; the first include does the work.
include_guard(GLOBAL)

option(KUBE_BUILD_DOCS "Configure the Doxygen API reference (target docs, ctest docs.doxygen)" ${PROJECT_IS_TOP_LEVEL})

set(KUBE_DOXYGEN_EXECUTABLE "" CACHE INTERNAL "doxygen used for the API reference")
set(KUBE_DOXYFILE "" CACHE INTERNAL "configured Doxyfile of the API reference")
if(NOT KUBE_BUILD_DOCS)
  return()
endif()

find_package(Doxygen 1.9.4 QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "kube: doxygen not found: no `docs` target (scripts/install-deps.sh installs it)")
  return()
endif()

set(KUBE_DOCS_OUTPUT_DIR ${PROJECT_BINARY_DIR}/docs/api)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${PROJECT_BINARY_DIR}/docs/Doxyfile @ONLY)
set(KUBE_DOXYGEN_EXECUTABLE "${DOXYGEN_EXECUTABLE}" CACHE INTERNAL "doxygen used for the API reference")
set(KUBE_DOXYFILE "${PROJECT_BINARY_DIR}/docs/Doxyfile" CACHE INTERNAL "configured Doxyfile of the API reference")

add_custom_target(docs
  COMMAND ${CMAKE_COMMAND} -E make_directory ${KUBE_DOCS_OUTPUT_DIR}
  COMMAND ${DOXYGEN_EXECUTABLE} ${KUBE_DOXYFILE}
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR}/docs
  COMMENT "Doxygen API reference -> ${KUBE_DOCS_OUTPUT_DIR}/html/index.html (warnings are errors)"
  VERBATIM)
