// kube-yaml2json IN OUT: converts a YAML manifest to JSON with kubectl's
// scalar rules, for kube-codegen's CRD mode (Python's standard library has no
// YAML parser). Exit status 1 with a message naming the file on bad input.

#include <kube/detail/config_files.hpp>
#include <kube/exception.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: kube-yaml2json IN.yaml OUT.json\n";
    return 2;
  }
  try {
    const std::string yaml = kube::detail::read_config_file(argv[1], "");
    const std::string json = kube::detail::yaml_to_json(yaml, argv[1]);
    const std::string tmp = std::string(argv[2]) + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << json << '\n';
      if (!out) {
        std::cerr << "kube-yaml2json: cannot write " << tmp << '\n';
        return 1;
      }
    }
    if (std::rename(tmp.c_str(), argv[2]) != 0) {
      std::cerr << "kube-yaml2json: cannot write " << argv[2] << '\n';
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "kube-yaml2json: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
