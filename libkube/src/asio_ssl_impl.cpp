// The one translation unit that compiles Asio's SSL support (Beast's own
// sources are kube::beast's, libkube/base/src/beast_impl.cpp).
#include <boost/asio/ssl/impl/src.hpp>
