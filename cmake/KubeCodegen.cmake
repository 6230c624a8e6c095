# kube_add_crd_types(<target> <manifest> [HEADER <include path>] [NAMESPACE <c++ namespace>])
#
# Generates C++ types, JSON codecs and kube::resource_traits for every served
# version of the CustomResourceDefinition(s) in <manifest> (YAML or JSON) at
# build time, and adds them to <target>. The header is included as
#   #include <HEADER>            (default: kube/crd/<manifest name>.hpp)
# and the types live in <NAMESPACE>::<version> (default namespace: the first
# label of the CRD's group, e.g. samplecontroller.k8s.io -> samplecontroller).
#
# <target> links kube::k8s_meta (the meta/v1 types the generated code uses);
# link kube::k8s as well for built-in types.
#
# Needs: Python 3 (standard library only), the kube-codegen script and the
# kube-yaml2json tool (both set up by the kube project or its package).
function(kube_add_crd_types target manifest)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "HEADER;NAMESPACE" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kube_add_crd_types: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "kube_add_crd_types: ${target} is not a target")
  endif()
  get_filename_component(manifest "${manifest}" ABSOLUTE)
  if(NOT EXISTS "${manifest}")
    message(FATAL_ERROR "kube_add_crd_types: ${manifest} does not exist")
  endif()
  get_filename_component(stem "${manifest}" NAME_WE)
  if(NOT arg_HEADER)
    set(arg_HEADER "kube/crd/${stem}.hpp")
  endif()
  string(MAKE_C_IDENTIFIER "${arg_HEADER}" id)
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/kube_crd/${id}")
  get_filename_component(hdr_stem "${arg_HEADER}" NAME_WE)
  string(MAKE_C_IDENTIFIER "${hdr_stem}" src_stem)
  set(json "${out_dir}/manifest.json")
  set(header "${out_dir}/include/${arg_HEADER}")
  set(source "${out_dir}/src/${src_stem}.cpp")
  set(ns_args)
  if(arg_NAMESPACE)
    set(ns_args --namespace ${arg_NAMESPACE})
  endif()
  add_custom_command(
    OUTPUT "${header}" "${source}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}"
    COMMAND ${KUBE_YAML2JSON} "${manifest}" "${json}"
    COMMAND ${KUBE_CODEGEN_PYTHON} ${KUBE_CODEGEN_SCRIPT} crd --manifest "${json}" --out "${out_dir}"
            --header "${arg_HEADER}" ${ns_args}
    DEPENDS "${manifest}" ${KUBE_CODEGEN_SCRIPT} ${KUBE_YAML2JSON}
    COMMENT "kube-codegen: C++ types for ${manifest}"
    VERBATIM)
  target_sources(${target} PRIVATE "${source}" "${header}")
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${out_dir}/include>")
  # The generated types refer to meta/v1 only (ObjectMeta, ListMeta): a
  # target that also uses built-in types (a controller's Deployments, the
  # scale subresource's Scale) links kube::k8s itself.
  target_link_libraries(${target} PUBLIC kube::k8s_meta)
endfunction()
