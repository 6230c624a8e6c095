# `cmake --install` produces a package that find_package(kube) finds.
include(CMakePackageConfigHelpers)

install(EXPORT kubeTargets NAMESPACE kube:: FILE kubeTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kube)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kubeConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/kubeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kube)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kubeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/kubeConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/kubeConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kube)
# kube_add_crd_types() for consumers: the CMake function, with the installed
# generator script and kube-yaml2json (kube::yaml2json).
install(FILES ${CMAKE_CURRENT_LIST_DIR}/KubeCodegen.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kube)
