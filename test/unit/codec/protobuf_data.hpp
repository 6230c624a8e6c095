#pragma once

// A file of test/data/protobuf (recorded from the test cluster), as bytes.

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

inline std::string protobuf_data(const std::string& name) {
  std::ifstream in(std::string(KUBE_PROTOBUF_DATA) + "/" + name, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
