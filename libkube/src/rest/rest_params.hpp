#pragma once

// Internal to libkube's sources: query parameters and bodies of the REST
// verbs, shared by the dynamic client (dynamic_api.cpp) and the typed
// client (typed_api.cpp).

#include <kube/rest/list_params.hpp>
#include <kube/transport/request.hpp>

#include <string>

namespace kube::detail {

/// labelSelector, fieldSelector, limit, continue, resourceVersion(Match), timeoutSeconds.
void add_list_params(request& r, const list_params& p);
/// watch=true and the watch options (allowWatchBookmarks, sendInitialEvents, ...).
void add_watch_params(request& r, const watch_params& p);
/// fieldManager, dryRun=All, fieldValidation.
void add_write_params(request& r, const std::string& field_manager, bool dry_run, const std::string& validation);
/// A DeleteOptions body (propagationPolicy, gracePeriodSeconds, preconditions, dryRun).
std::string delete_options(const delete_params& p);

}  // namespace kube::detail
