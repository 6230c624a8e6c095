// Sharding without a cluster: the hash, the ring (balance, and which keys
// move when members come and go), the parameters' checks, and the
// membership rules on a manual time (join, acknowledge, agreement, a
// replica's informer behind its own write, renew deadline, expiry).
#include <kube/controller/sharding.hpp>
#include <kube/exception.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace kc = kube::controller;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> keys(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("ns-" + std::to_string(i % 7) + "/obj-" + std::to_string(i));
  return out;
}

kc::shard_lease lease(const std::string& holder, const std::string& view, const std::string& rv, int seconds = 4) {
  return kc::shard_lease{"ring-shard-" + holder, holder, seconds, view, rv};
}

}  // namespace

TEST_CASE("shard_hash is the same everywhere - pinned values", "[sharding]") {
  // FNV-1a 64 then splitmix64's finalizer, computed independently.
  CHECK(kc::shard_hash("") == 17665956581633026203ULL);
  CHECK(kc::shard_hash("default/cm-0001") == 11442337220898282793ULL);
}

TEST_CASE("hash_ring: owners and balance - only the keys of a member that comes or goes move", "[sharding]") {
  const kc::hash_ring empty;
  CHECK(empty.owner("a/b").empty());

  const kc::hash_ring one({"solo"});
  CHECK(one.owner("a/b") == "solo");

  const kc::hash_ring three({"r3", "r1", "r2", "r1", ""});  // duplicates and empty names ignored, order irrelevant
  REQUIRE(three.members() == std::vector<std::string>{"r1", "r2", "r3"});
  const kc::hash_ring again({"r2", "r3", "r1"});
  const auto ks = keys(10000);
  std::map<std::string, int> count;
  for (const auto& k : ks) {
    CHECK(three.owner(k) == again.owner(k));
    ++count[three.owner(k)];
  }
  for (const auto& [m, n] : count) {
    INFO(m << " owns " << n << " of 10000");
    CHECK(n > 2500);
    CHECK(n < 4200);
  }

  // A fourth member takes keys from the others; no key moves between the others.
  const kc::hash_ring four({"r1", "r2", "r3", "r4"});
  int moved = 0;
  for (const auto& k : ks) {
    if (four.owner(k) != three.owner(k)) {
      CHECK(four.owner(k) == "r4");
      ++moved;
    }
  }
  CHECK(moved > 1500);
  CHECK(moved < 3500);

  // r2 leaves: only its keys move.
  const kc::hash_ring two({"r1", "r3"});
  for (const auto& k : ks) {
    if (three.owner(k) != "r2") CHECK(two.owner(k) == three.owner(k));
  }
}

TEST_CASE("sharding_params: every bad field is named", "[sharding]") {
  kc::sharding_params p;
  p.ring = "Bad_Ring";
  p.identity = "";
  p.renew_deadline = 1s;
  p.retry_period = 2s;
  p.lease_duration = 1500ms;
  try {
    kc::validate(p);
    FAIL("accepted");
  } catch (const kube::error& e) {
    const std::string what = e.what();
    CHECK(what.find("ring \"Bad_Ring\"") != std::string::npos);
    CHECK(what.find("identity") != std::string::npos);
    CHECK(what.find("lease_namespace is empty") != std::string::npos);
    CHECK(what.find("lease_duration (1500ms) must be whole seconds") != std::string::npos);
    CHECK(what.find("renew_deadline (1000ms) must be greater than retry_period (2000ms)") != std::string::npos);
  }
  kc::sharding_params ok;
  ok.ring = "foo-controller";
  ok.lease_namespace = "demo";
  ok.identity = "pod-1";
  CHECK_NOTHROW(kc::validate(ok));
  CHECK(kc::shard_lease_name(ok) == "foo-controller-shard-pod-1");
  // Identities that would fold into one Lease name, or make no valid one.
  for (const char* bad_identity : {"Pod-1", "pod_1", "a..b", "a.-b", "-a", "a-"}) {
    kc::sharding_params b = ok;
    b.identity = bad_identity;
    INFO(bad_identity);
    CHECK_THROWS_AS(kc::validate(b), kube::error);
  }
  kc::sharding_params dotted = ok;
  dotted.identity = "node-1.pod-2";
  CHECK_NOTHROW(kc::validate(dotted));
  CHECK(kc::encode_view({"b", "a", "b"}) == "a,b");
}

TEST_CASE("shard_membership: join then acknowledge then agree", "[sharding]") {
  using tp = kc::shard_membership::time_point;
  tp t{};
  kc::shard_membership a("a", 3s);
  CHECK(a.decide("x/1", t) == kc::shard_decision::not_mine);  // not a member yet

  // Joined (no view acknowledged); the informer shows the Lease.
  a.wrote("", "10", t);
  a.observe({lease("a", "", "10")}, t);
  CHECK(a.member());
  CHECK(a.view() == "a");
  CHECK(a.needs_acknowledgement());
  CHECK(a.decide("x/1", t) == kc::shard_decision::waiting);

  // Acknowledged; not agreed until the informer shows that write.
  a.wrote("a", "11", t);
  CHECK(a.decide("x/1", t) == kc::shard_decision::waiting);
  a.observe({lease("a", "a", "11")}, t);
  CHECK_FALSE(a.needs_acknowledgement());
  CHECK(a.agreed(t));
  CHECK(a.decide("x/1", t) == kc::shard_decision::mine);

  // A renewal (same view) does not pause the keys while the informer catches up.
  a.wrote("a", "15", t + 1s);
  CHECK(a.decide("x/1", t + 1s) == kc::shard_decision::mine);

  // No successful write for longer than renew_deadline: no key starts.
  CHECK(a.decide("x/1", t + 4100ms) == kc::shard_decision::waiting);
  a.wrote("a", "16", t + 4200ms);
  CHECK(a.decide("x/1", t + 4200ms) == kc::shard_decision::mine);

  a.left();
  CHECK_FALSE(a.member());
  CHECK(a.decide("x/1", t + 4200ms) == kc::shard_decision::not_mine);
}

TEST_CASE("shard_membership: a new member gets keys only after the old owner acknowledged", "[sharding]") {
  using tp = kc::shard_membership::time_point;
  const tp t{};
  kc::shard_membership a("a", 3s), b("b", 3s);
  a.wrote("a", "11", t);
  a.observe({lease("a", "a", "11")}, t);
  REQUIRE(a.agreed(t));

  // b joins: both see {a, b}; a acknowledged only {a}.
  b.wrote("", "12", t);
  const std::vector<kc::shard_lease> joined{lease("a", "a", "11"), lease("b", "", "12")};
  a.observe(joined, t);
  b.observe(joined, t);
  CHECK(a.view() == "a,b");
  const kc::hash_ring ring({"a", "b"});
  std::string of_a, of_b;
  for (const auto& k : keys(200)) {
    (ring.owner(k) == "a" ? of_a : of_b) = k;
  }
  REQUIRE(!of_a.empty());
  REQUIRE(!of_b.empty());
  // a still runs nothing new until it acknowledged {a, b}; b waits for a.
  CHECK(a.decide(of_b, t) == kc::shard_decision::not_mine);
  CHECK(a.decide(of_a, t) == kc::shard_decision::waiting);
  CHECK(b.decide(of_b, t) == kc::shard_decision::waiting);
  CHECK(b.decide(of_a, t) == kc::shard_decision::not_mine);

  // b acknowledges {a, b}; a has not: b still waits.
  b.wrote("a,b", "13", t);
  const std::vector<kc::shard_lease> half{lease("a", "a", "11"), lease("b", "a,b", "13")};
  a.observe(half, t);
  b.observe(half, t);
  CHECK(b.decide(of_b, t) == kc::shard_decision::waiting);

  // a acknowledges (after draining of_b): both start their own keys.
  a.wrote("a,b", "14", t);
  const std::vector<kc::shard_lease> both{lease("a", "a,b", "14"), lease("b", "a,b", "13")};
  a.observe(both, t);
  b.observe(both, t);
  CHECK(a.decide(of_a, t) == kc::shard_decision::mine);
  CHECK(b.decide(of_b, t) == kc::shard_decision::mine);
  CHECK(a.decide(of_b, t) == kc::shard_decision::not_mine);
  CHECK(b.decide(of_a, t) == kc::shard_decision::not_mine);
}

TEST_CASE("shard_membership: a Lease that stops changing expires after its duration", "[sharding]") {
  using tp = kc::shard_membership::time_point;
  const tp t{};
  kc::shard_membership a("a", 3s);
  a.wrote("a,b", "20", t);
  a.observe({lease("a", "a,b", "20"), lease("b", "a,b", "21", 4)}, t);
  CHECK(a.expired(t + 3900ms).empty());
  // b renewed at t+2s (new resourceVersion): its expiry counts from then.
  a.observe({lease("a", "a,b", "20"), lease("b", "a,b", "25", 4)}, t + 2s);
  CHECK(a.expired(t + 5s).empty());
  const auto gone = a.expired(t + 6s);
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].holder == "b");
  CHECK(gone[0].resource_version == "25");  // the emptying update is guarded by it
  // Emptied: b is no member any more, a owns everything once it acknowledged.
  a.observe({lease("a", "a,b", "20"), lease("", "a,b", "30", 1)}, t + 6s);
  CHECK(a.view() == "a");
  CHECK(a.needs_acknowledgement());
  CHECK(a.expired(t + 60s).empty());  // an empty Lease is not removed again
}
