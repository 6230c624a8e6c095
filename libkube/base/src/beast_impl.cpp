// The one translation unit that compiles Boost.Beast
// (BOOST_BEAST_SEPARATE_COMPILATION is on kube::beast's interface), shared by
// the client (kube::kube) and the /metrics server (kube::prometheus), so a
// program that links both has one copy of Beast.
#include <boost/beast/src.hpp>
