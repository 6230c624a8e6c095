// Leader election without I/O: config validation and client-go's
// tryAcquireOrRenew decisions on a manual monotonic clock.
#include <kube/exception.hpp>
#include <kube/tools/leader_election.hpp>

#include <catch2/catch.hpp>

using namespace std::chrono_literals;
using tp = kube::leader_election_state::time_point;

namespace {

kube::leader_elector_params good() {
  kube::leader_elector_params c;
  c.lease_namespace = "ns";
  c.lease_name = "lock";
  c.identity = "a";
  c.lease_duration = 3s;
  c.renew_deadline = 2s;
  c.retry_period = 500ms;
  return c;
}

std::string validation_message(const kube::leader_elector_params& c) {
  try {
    kube::validate(c);
  } catch (const kube::error& e) {
    CHECK(e.code() == kube::client_errc::invalid_config);
    return e.diag().client_message();
  }
  return "";
}

kube::leader_election_record held_by(const std::string& who, int seconds, const std::string& renew,
                                     int transitions = 0) {
  kube::leader_election_record r;
  r.holder_identity = who;
  r.lease_duration_seconds = seconds;
  r.acquire_time = "2020-01-01T00:00:00.000000Z";
  r.renew_time = renew;
  r.leader_transitions = transitions;
  return r;
}

const tp t0 = tp{} + 1h;

}  // namespace

TEST_CASE("leader election config: client-go's ordering rules, each named in the error", "[leader][config]") {
  CHECK_NOTHROW(kube::validate(good()));
  auto defaults = good();
  defaults.lease_duration = 15s;
  defaults.renew_deadline = 10s;
  defaults.retry_period = 2s;
  CHECK_NOTHROW(kube::validate(defaults));

  auto c = good();
  c.renew_deadline = 3s;
  CHECK_THAT(validation_message(c),
             Catch::Contains("lease_duration (3000ms) must be greater than renew_deadline (3000ms)"));

  c = good();
  c.retry_period = 2s;  // 1.2 x 2s = 2.4s >= renew_deadline 2s
  CHECK_THAT(validation_message(c),
             Catch::Contains("renew_deadline (2000ms) must be greater than 1.2 x retry_period (2000ms)"));
  c.retry_period = 1666ms;  // 1.2 x 1666 = 1999.2 < 2000: fine
  CHECK(validation_message(c).empty());
  c.retry_period = 1667ms;  // 2000.4: too long
  CHECK_THAT(validation_message(c), Catch::Contains("1.2 x retry_period"));

  c = good();
  c.lease_duration = 2500ms;
  CHECK_THAT(validation_message(c), Catch::Contains("lease_duration (2500ms) must be whole seconds"));

  c = good();
  c.identity.clear();
  c.lease_name.clear();
  const auto m = validation_message(c);
  CHECK_THAT(m, Catch::Contains("identity is empty"));
  CHECK_THAT(m, Catch::Contains("lease_name is empty"));
  CHECK_THAT(m, Catch::StartsWith("leader election config: "));

  c = good();
  c.retry_period = 0ms;
  CHECK_THAT(validation_message(c), Catch::Contains("retry_period (0ms) must be positive"));
}

TEST_CASE("no lease yet: create it with us as holder and no transitions", "[leader][state]") {
  kube::leader_election_state s("a", 3s);
  CHECK_FALSE(s.is_leader());
  CHECK(s.may_write(t0));
  const auto r = s.desired("T1");
  CHECK(r.holder_identity == "a");
  CHECK(r.lease_duration_seconds == 3);
  CHECK(r.acquire_time == "T1");
  CHECK(r.renew_time == "T1");
  CHECK(r.leader_transitions == 0);
  s.wrote(r, t0);
  CHECK(s.is_leader());
  CHECK(s.may_renew_optimistically(t0 + 2999ms));
  CHECK_FALSE(s.may_renew_optimistically(t0 + 3s));
}

TEST_CASE("expiry is judged by the local observation time, not the server's renewTime", "[leader][state]") {
  kube::leader_election_state s("b", 3s);
  // renewTime is years old by any wall clock, but we only just saw this record.
  s.observe(held_by("a", 3, "2001-01-01T00:00:00.000000Z"), t0);
  CHECK_FALSE(s.may_write(t0));
  CHECK_FALSE(s.may_write(t0 + 2999ms));
  CHECK(s.may_write(t0 + 3s));  // lease_duration after we first saw it
}

TEST_CASE("an unchanged record does not extend the lease but a changed one restarts the clock", "[leader][state]") {
  kube::leader_election_state s("b", 3s);
  const auto first = held_by("a", 3, "R1");
  s.observe(first, t0);
  s.observe(first, t0 + 2s);  // same record: the holder did not renew
  CHECK(s.observed_time() == t0);
  CHECK(s.may_write(t0 + 3s));

  s.observe(held_by("a", 3, "R2"), t0 + 2500ms);  // the holder renewed
  CHECK(s.observed_time() == t0 + 2500ms);
  CHECK_FALSE(s.may_write(t0 + 5s));
  CHECK(s.may_write(t0 + 5500ms));
}

TEST_CASE("the observed record's leaseDurationSeconds counts, not ours", "[leader][state]") {
  kube::leader_election_state s("b", 3s);
  s.observe(held_by("a", 10, "R1"), t0);
  CHECK_FALSE(s.may_write(t0 + 9s));
  CHECK(s.may_write(t0 + 10s));
}

TEST_CASE("a released lease (empty holder) may be taken at once", "[leader][state]") {
  kube::leader_election_state s("b", 3s);
  auto released = held_by("", 1, "R9", 4);
  s.observe(released, t0);
  CHECK(s.lease_valid(t0));
  CHECK(s.may_write(t0));
  const auto r = s.desired("T2");
  CHECK(r.holder_identity == "b");
  CHECK(r.acquire_time == "T2");
  CHECK(r.leader_transitions == 5);  // a transition: someone else (nobody) held it
}

TEST_CASE("taking over an expired lease counts a transition and renewing keeps acquireTime", "[leader][state]") {
  kube::leader_election_state s("b", 3s);
  s.observe(held_by("a", 3, "R1", 2), t0);
  REQUIRE(s.may_write(t0 + 3s));
  const auto taken = s.desired("T3");
  CHECK(taken.leader_transitions == 3);
  CHECK(taken.acquire_time == "T3");
  s.wrote(taken, t0 + 3s);
  CHECK(s.is_leader());

  const auto renewed = s.desired("T4");
  CHECK(renewed.acquire_time == "T3");
  CHECK(renewed.renew_time == "T4");
  CHECK(renewed.leader_transitions == 3);

  // Our own record read back: we may always write it (renew), even while valid.
  s.observe(renewed, t0 + 4s);
  CHECK(s.may_write(t0 + 4s));
}

TEST_CASE("the leader that sees another holder is no longer leader", "[leader][state]") {
  kube::leader_election_state s("a", 3s);
  s.wrote(held_by("a", 3, "R1"), t0);
  REQUIRE(s.is_leader());
  s.observe(held_by("c", 3, "R2", 1), t0 + 1s);
  CHECK_FALSE(s.is_leader());
  CHECK_FALSE(s.may_write(t0 + 1s));
  CHECK_FALSE(s.may_renew_optimistically(t0 + 1s));
}

TEST_CASE("release: empty holder, 1 second, transitions kept", "[leader][state]") {
  kube::leader_election_state s("a", 3s);
  s.wrote(held_by("a", 3, "R1", 7), t0);
  const auto r = s.released("T5");
  CHECK(r.holder_identity.empty());
  CHECK(r.lease_duration_seconds == 1);
  CHECK(r.leader_transitions == 7);
  CHECK(r.renew_time == "T5");
}

TEST_CASE("after reset (lease deleted) the next write is a fresh create", "[leader][state]") {
  kube::leader_election_state s("a", 3s);
  s.observe(held_by("c", 3, "R1", 3), t0);
  s.reset();
  CHECK_FALSE(s.observed());
  CHECK(s.may_write(t0));
  CHECK(s.desired("T").leader_transitions == 0);
}

TEST_CASE("MicroTime formatting", "[leader]") {
  using namespace std::chrono;
  const auto t = system_clock::time_point{} + seconds(1714557600) + microseconds(123456);
  CHECK(kube::format_micro_time(t) == "2024-05-01T10:00:00.123456Z");
  CHECK(kube::format_micro_time(system_clock::time_point{}) == "1970-01-01T00:00:00.000000Z");
}
