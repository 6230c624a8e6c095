#pragma once

// Sharded controllers: several replicas of one controller, each reconciling
// the keys a consistent-hash ring assigns to it (docs/guides/sharding.md).
//
// Membership is a coordination.k8s.io/v1 Lease per replica, labelled
// sharding.kube-cpp.dev/ring=<ring>, held (holderIdentity) and renewed by the
// replica. The ring's members are the holders of those Leases: a view is a
// function of the Leases the apiserver holds, so every replica sees the
// same sequence of views (a watch delivers one resource's changes in order).
// A replica whose Lease has not changed for its duration (by the observer's
// monotonic clock, as in leader election) is removed by whoever sees it
// first: an update that empties the holder, guarded by the resourceVersion
// seen.
//
// Safe handover: each replica acknowledges a view in its Lease (annotation
// sharding.kube-cpp.dev/view) only once no reconcile of a key it does not own
// under that view is running. A replica starts a key only when
//   - the key is its own under its current view,
//   - every member of that view has acknowledged it, and its own latest
//     acknowledgement is in the Leases it observes (its informer is not
//     behind its own write),
//   - it renewed its Lease within renew_deadline.
// So the old owner has dropped the key (and said so) before the new owner
// starts it. See the guide for the proof sketch and the failure cases.
//
// Label mode (sharding_params::label_objects): objects carry the label
// shard.kube-cpp.dev/<ring>=<identity> of the replica that owns their key,
// and each replica's informers select only its own, so its caches hold
// about 1/n of the objects. The replicas write the labels themselves: the
// owner labels unlabelled objects (a metadata informer over "!label"), a
// replica hands what it loses to the new owner before it acknowledges a
// view, and objects labelled for a replica that is not a member are taken
// by their owners when a view is agreed.
//
// This header includes the parts: sharding/hash_ring.hpp (shard_hash,
// hash_ring), sharding/params.hpp (sharding_params and the names derived
// from them), sharding/membership.hpp (the rules, shard_membership) and
// sharding/coordinator.hpp (shard_coordinator).

#include <kube/controller/sharding/coordinator.hpp>
#include <kube/controller/sharding/hash_ring.hpp>
#include <kube/controller/sharding/membership.hpp>
#include <kube/controller/sharding/params.hpp>
