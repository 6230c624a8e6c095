// The one translation unit that compiles Boost.Asio
// (BOOST_ASIO_SEPARATE_COMPILATION is set on kube::base's interface).
#include <boost/asio/impl/src.hpp>
