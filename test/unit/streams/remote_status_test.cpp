// The Status an exec's error channel carries, read into remote_exit or an
// error (async_wait's result). The texts are written the way the kubelet's
// remotecommand server writes them (metav1.Status without kind, as
// json.Marshal gives it); the InternalError one is what KWOK answered in the
// test cluster for `sh -c 'exit 3'`.
#include <kube/streams/remote_command.hpp>

#include <catch2/catch.hpp>

namespace {
kube::request exec_request() {
  kube::request r;
  r.version("v1").resource("pods").namespace_("ns").name("p1").subresource("exec");
  return r;
}
}  // namespace

TEST_CASE("an exec's Status: success, exit codes, failures", "[streams]") {
  const auto req = exec_request();
  kube::error_code ec;
  kube::diagnostics diag;

  SECTION("Success is code 0") {
    const auto e = kube::detail::remote_exit_of(R"({"metadata":{},"status":"Success"})", req, ec, diag);
    CHECK_FALSE(ec);
    CHECK(e.code == 0);
  }
  SECTION("NonZeroExitCode carries the code in its causes") {
    const auto e = kube::detail::remote_exit_of(
        R"({"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: exit status 3",)"
        R"("reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}})",
        req, ec, diag);
    CHECK_FALSE(ec);
    CHECK(e.code == 3);
  }
  SECTION("any other Status is the error, with the Status in the diagnostics") {
    const auto e = kube::detail::remote_exit_of(
        R"({"metadata":{},"status":"Failure","message":"Internal error occurred: error executing command in )"
        R"(container: cmd wait: sh -c exit 3: exit status 3","reason":"InternalError","details":{"causes":[{)"
        R"("message":"error executing command in container: cmd wait: sh -c exit 3: exit status 3"}]},"code":500})",
        req, ec, diag);
    CHECK(ec == kube::api_errc::internal_error);
    CHECK(e.code == 0);
    CHECK_THAT(diag.server_message(), Catch::Contains("exit status 3"));
    CHECK_THAT(diag.client_message(), Catch::Contains("p1"));
  }
  SECTION("NonZeroExitCode without a readable code is an error, not a made-up code") {
    (void)kube::detail::remote_exit_of(
        R"({"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"x"}]}})",
        req, ec, diag);
    CHECK(ec);
  }
  SECTION("text that is not a Status is a protocol error") {
    (void)kube::detail::remote_exit_of("not json", req, ec, diag);
    CHECK(ec == kube::client_errc::protocol_error);
    CHECK_THAT(diag.client_message(), Catch::Contains("error channel"));
  }
}
