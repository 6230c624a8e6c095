#pragma once

// Internal helpers of kubeconfig / client_config loading: file reads with
// messages that name the file and field, Go-compatible path joining, YAML.
// Not part of the public API.

#include <kube/error.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace kube::detail {

/// Throws kube::error{code, message}.
[[noreturn]] void throw_config_error(client_errc code, std::string message);

/// Reads a whole file. On failure throws file_error with
/// "<context>: <path>: <strerror>" (context names the kubeconfig and field,
/// e.g. "/h/.kube/config: users[name=dev].user.client-key"; may be empty).
[[nodiscard]] std::string read_config_file(const std::string& path, std::string_view context);

/// Like read_config_file, but a missing file (ENOENT/ENOTDIR) yields nullopt.
[[nodiscard]] std::optional<std::string> read_config_file_if_exists(const std::string& path, std::string_view context);

/// True when the path names an existing non-directory file.
[[nodiscard]] bool regular_file_exists(const std::string& path);

/// Go's filepath.Clean: lexical, "." for an empty result.
[[nodiscard]] std::string clean_path(std::string_view path);
/// Go's filepath.Join of two elements (cleaned; empty elements ignored).
[[nodiscard]] std::string join_path(std::string_view base, std::string_view rel);
/// Go's filepath.Dir.
[[nodiscard]] std::string dir_path(std::string_view path);
/// Go's filepath.Abs: joined with the current directory when relative.
[[nodiscard]] std::string absolute_path(std::string_view path);

/// Converts a YAML stream to JSON text with sigs.k8s.io/yaml's scalar rules
/// (as kubectl reads manifests): one document gives its value, several give a
/// JSON array of the non-empty documents. Throws kube::error (invalid_config)
/// naming `origin` and the line for malformed YAML.
[[nodiscard]] std::string yaml_to_json(std::string_view yaml, const std::string& origin);

/// The environment variable's value, or nullopt when unset.
[[nodiscard]] std::optional<std::string> get_env(const char* name);

}  // namespace kube::detail
