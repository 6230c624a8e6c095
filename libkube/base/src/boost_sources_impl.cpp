// Boost.JSON and Boost.URL compiled from their sources (CMake option
// KUBE_BOOST_SOURCES), for a build whose standard library is not the one
// Debian's libboost_json and libboost_url were built with (clang's libc++).
#include <boost/json/src.hpp>
#include <boost/url/src.hpp>
