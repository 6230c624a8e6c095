// The one translation unit that compiles Boost.Beast and Asio's SSL support
// (BOOST_BEAST_SEPARATE_COMPILATION is set on kube::kube's interface).
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
