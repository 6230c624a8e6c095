#pragma once

// Value types the generated Kubernetes objects are made of, beyond the
// standard library's: IntOrString, Quantity, Time/MicroTime, base64 bytes,
// arbitrary JSON (RawExtension, FieldsV1, CRD fields that preserve unknown
// fields), the JSON members a struct does not know, a copyable box for
// recursive types, and (string_map.hpp) the map of map-valued fields.
//
// These headers only forward-declare Boost.JSON; code that reads a raw_json
// or unknown_fields value includes <boost/json/value.hpp> itself.
//
// Thread safety: all are plain values; distinct objects may be used
// concurrently, and const access to one object from several threads is safe
// (raw_json and unknown_fields share immutable JSON between copies).

#include <kube/codec/string_map.hpp>

#include <boost/json/fwd.hpp>

#include <chrono>
#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace kube {

/// A value that is either an integer or a string (intstr.IntOrString), e.g. a
/// port name or number, or "25%".
class int_or_string {
public:
  int_or_string() = default;
  int_or_string(std::int64_t i)
      : i_(i) {}  // NOLINT(google-explicit-constructor)
  int_or_string(int i)
      : i_(i) {}  // NOLINT(google-explicit-constructor)
  int_or_string(std::string s)
      : s_(std::move(s)),
        is_string_(true) {}  // NOLINT(google-explicit-constructor)
  int_or_string(const char* s)
      : s_(s),
        is_string_(true) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool is_int() const noexcept { return !is_string_; }
  [[nodiscard]] bool is_string() const noexcept { return is_string_; }
  /// The integer; 0 when this holds a string.
  [[nodiscard]] std::int64_t int_value() const noexcept { return is_string_ ? 0 : i_; }
  /// The string; empty when this holds an integer.
  [[nodiscard]] const std::string& string_value() const noexcept { return s_; }
  /// "8080" or the string itself ("http", "25%").
  [[nodiscard]] std::string to_string() const;

  /// client-go's GetScaledValueFromIntOrPercent: an integer as is, "25%" of
  /// `total` rounded up or down; nullopt for any other string, and when the
  /// result does not fit in 64 bits.
  [[nodiscard]] std::optional<std::int64_t> scaled_value(std::int64_t total, bool round_up) const;

  friend bool operator==(const int_or_string& a, const int_or_string& b) noexcept {
    return a.is_string_ == b.is_string_ && (a.is_string_ ? a.s_ == b.s_ : a.i_ == b.i_);
  }

private:
  // Two plain members rather than a std::variant: g++ 12 reports false
  // "maybe uninitialized" warnings on variant<int64_t, string> assignment.
  std::int64_t i_ = 0;
  std::string s_;
  bool is_string_ = false;
};

/// A resource quantity (resource.Quantity), e.g. "100m", "1.5Gi", "1e3".
///
/// Holds the text as the server sent it (so it round-trips unchanged) and
/// computes numbers on demand. Decoding rejects malformed text with an error
/// naming the field.
class quantity {
public:
  quantity()
      : text_("0") {}
  /// Throws std::invalid_argument naming the text if it is not a quantity.
  explicit quantity(std::string text);

  [[nodiscard]] const std::string& text() const noexcept { return text_; }
  /// The value in thousandths, rounded up (client-go's MilliValue).
  [[nodiscard]] std::int64_t milli_value() const;
  /// The value rounded up to an integer (client-go's Value).
  [[nodiscard]] std::int64_t value() const;
  [[nodiscard]] double as_double() const;

  /// true if `text` is a valid quantity.
  [[nodiscard]] static bool valid(std::string_view text) noexcept;

  /// Textual equality; "1000m" and "1" are different texts but compare(...) == 0.
  friend bool operator==(const quantity&, const quantity&) = default;
  /// Numeric comparison: <0, 0, >0.
  [[nodiscard]] int compare(const quantity& other) const;

private:
  std::string text_;
};

/// metav1.Time: an RFC 3339 instant with second precision, always UTC on the wire.
class timestamp {
public:
  using time_point = std::chrono::sys_time<std::chrono::microseconds>;
  timestamp() = default;
  explicit timestamp(time_point t)
      : t_(t) {}
  [[nodiscard]] static timestamp now();
  /// Parses RFC 3339 ("2024-05-01T10:00:00Z", offsets and fractions accepted);
  /// nullopt if malformed.
  [[nodiscard]] static std::optional<timestamp> parse(std::string_view text);

  [[nodiscard]] time_point time() const noexcept { return t_; }
  /// "2024-05-01T10:00:00Z" (fractions dropped, as Kubernetes does).
  [[nodiscard]] std::string to_string() const;
  /// "2024-05-01T10:00:00.000000Z" (metav1.MicroTime's wire form).
  [[nodiscard]] std::string to_micro_string() const;

  friend bool operator==(const timestamp&, const timestamp&) = default;
  // Written out: libc++ 16 has no operator<=> for std::chrono::time_point.
  friend std::strong_ordering operator<=>(const timestamp& a, const timestamp& b) noexcept {
    return a.t_.time_since_epoch().count() <=> b.t_.time_since_epoch().count();
  }

private:
  time_point t_{};
};

/// metav1.MicroTime: like timestamp, microseconds kept on the wire.
class micro_timestamp : public timestamp {
public:
  using timestamp::timestamp;
  micro_timestamp() = default;
  explicit micro_timestamp(const timestamp& t)
      : timestamp(t) {}
  [[nodiscard]] static micro_timestamp now() { return micro_timestamp(timestamp::now()); }
};

/// Binary data carried as base64 on the wire (OpenAPI `format: byte`, e.g.
/// Secret.data). Holds the decoded bytes.
class bytes {
public:
  bytes() = default;
  bytes(std::string data)
      : data_(std::move(data)) {}  // NOLINT(google-explicit-constructor)
  bytes(std::string_view data)
      : data_(data) {}  // NOLINT(google-explicit-constructor)
  bytes(const char* data)
      : data_(data) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] const std::string& str() const noexcept { return data_; }
  [[nodiscard]] std::string& str() noexcept { return data_; }
  operator std::string_view() const noexcept { return data_; }  // NOLINT(google-explicit-constructor)

  friend bool operator==(const bytes&, const bytes&) = default;

private:
  std::string data_;
};

/// Any JSON value (runtime.RawExtension, FieldsV1, apiextensions JSON, CRD
/// fields with x-kubernetes-preserve-unknown-fields). Kept as its compact
/// JSON text, as Go keeps RawExtension and FieldsV1 as bytes: far smaller in
/// a cache than a parsed tree (managedFields alone are often half an
/// object). value() parses on each call; dump() is free. Copies share the
/// immutable text, and so do values decoded or built from equal text (one
/// process-wide pool: the Pods of one ReplicaSet carry the same
/// managedFields text, kept once; see docs/guides/types.md).
namespace codec {
class json_reader;
}

class raw_json {
public:
  raw_json() = default;
  explicit raw_json(const boost::json::value& v);

  /// The value, parsed from the text; a JSON null when empty.
  [[nodiscard]] boost::json::value value() const;
  [[nodiscard]] bool is_null() const noexcept;
  void set(const boost::json::value& v);
  /// Parses `json` (to check it) and keeps it compact; throws
  /// std::invalid_argument if it is not JSON.
  [[nodiscard]] static raw_json parse(std::string_view json);
  /// The compact JSON text ("null" when empty).
  [[nodiscard]] std::string dump() const;
  /// The compact JSON text, without a copy; empty when empty.
  [[nodiscard]] std::string_view text() const noexcept { return t_ ? std::string_view(*t_) : std::string_view(); }

  friend bool operator==(const raw_json& a, const raw_json& b);

private:
  friend class codec::json_reader;  // keeps already compact text without a parse
  std::shared_ptr<const std::string> t_;
};

/// The JSON members of an object that its C++ struct has no field for, and
/// the protobuf fields it has no field for. Decoding keeps them and encoding
/// writes them back, so a client built against an older API never drops
/// newer fields on update. Each wire format keeps its own: an object read as
/// protobuf and written as JSON cannot carry its unknown protobuf fields
/// (nor the reverse), see docs/guides/protobuf.md. Copies share one immutable
/// object until one of them is changed.
class unknown_fields {
public:
  unknown_fields() noexcept = default;
  unknown_fields(const unknown_fields& o) noexcept
      : r_(o.r_) {
    if (r_) add_ref(r_);
  }
  unknown_fields(unknown_fields&& o) noexcept
      : r_(std::exchange(o.r_, nullptr)) {}
  unknown_fields& operator=(const unknown_fields& o) noexcept {
    unknown_fields(o).swap(*this);
    return *this;
  }
  unknown_fields& operator=(unknown_fields&& o) noexcept {
    unknown_fields(std::move(o)).swap(*this);
    return *this;
  }
  ~unknown_fields() {
    if (r_) release(r_);
  }
  void swap(unknown_fields& o) noexcept { std::swap(r_, o.r_); }

  /// No JSON members and no protobuf fields.
  [[nodiscard]] bool empty() const noexcept;
  /// The number of JSON members.
  [[nodiscard]] std::size_t size() const noexcept;
  /// The member, or nullptr.
  [[nodiscard]] const boost::json::value* find(std::string_view key) const noexcept;
  void set(std::string_view key, boost::json::value v);
  bool erase(std::string_view key);
  void clear() noexcept {
    if (r_) release(std::exchange(r_, nullptr));
  }
  /// The members, or nullptr when there are none.
  [[nodiscard]] const boost::json::object* get() const noexcept;
  /// The unknown protobuf fields, as they were on the wire (tag and value
  /// of each); empty when there are none.
  [[nodiscard]] std::string_view protobuf() const noexcept;
  /// Keeps whole protobuf fields (what protobuf() returns).
  void append_protobuf(std::string_view fields);

  friend bool operator==(const unknown_fields& a, const unknown_fields& b) noexcept;

private:
  // One pointer, not a std::shared_ptr: every generated struct has one of
  // these and nearly all are empty, so its size counts in every cached
  // object. The members and a reference count, never mutated once shared.
  struct rep;
  static void add_ref(rep* r) noexcept;
  static void release(rep* r) noexcept;
  rep* r_ = nullptr;
};

/// An optional value kept on the heap: std::optional's interface (emplace,
/// reset, has_value, operator bool, *, ->, value, = T, == nullopt), pointer
/// size when empty. Generated types use it for optional object fields, as Go
/// uses pointers for them: most of those fields are absent in real objects,
/// and an inline std::optional would reserve their full size anyway (a Pod
/// would weigh tens of kilobytes). Copying copies the value. T may be
/// incomplete where the field is declared (recursive types).
template <class T>
class heap_optional {
public:
  using value_type = T;
  heap_optional() noexcept = default;
  heap_optional(std::nullopt_t) noexcept {}  // NOLINT(google-explicit-constructor)
  heap_optional(T v)
      : p_(new T(std::move(v))) {}  // NOLINT(google-explicit-constructor)
  heap_optional(const heap_optional& o)
      : p_(o.p_ ? new T(*o.p_) : nullptr) {}
  heap_optional(heap_optional&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)) {}
  heap_optional& operator=(const heap_optional& o) {
    if (this != &o) {
      T* copy = o.p_ ? new T(*o.p_) : nullptr;  // may throw: *this stays as it was
      delete p_;
      p_ = copy;
    }
    return *this;
  }
  heap_optional& operator=(heap_optional&& o) noexcept {
    if (this != &o) {
      delete p_;
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  heap_optional& operator=(std::nullopt_t) noexcept {
    reset();
    return *this;
  }
  heap_optional& operator=(T v) {
    if (p_) {
      *p_ = std::move(v);
    } else {
      p_ = new T(std::move(v));
    }
    return *this;
  }
  ~heap_optional() { delete p_; }

  template <class... Args>
  T& emplace(Args&&... args) {
    T* made = new T(std::forward<Args>(args)...);
    delete p_;
    p_ = made;
    return *p_;
  }
  void reset() noexcept {
    delete p_;
    p_ = nullptr;
  }
  [[nodiscard]] bool has_value() const noexcept { return p_ != nullptr; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

  T& operator*() noexcept { return *p_; }
  const T& operator*() const noexcept { return *p_; }
  T* operator->() noexcept { return p_; }
  const T* operator->() const noexcept { return p_; }
  /// Throws std::bad_optional_access when empty.
  T& value() {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }

  friend bool operator==(const heap_optional& a, std::nullopt_t) noexcept { return !a.p_; }

private:
  // A plain owning pointer rather than std::unique_ptr: every generated
  // header instantiates this for several types, and unique_ptr's machinery
  // (tuple, deleter traits) was a sixth of the compile time of a TU that
  // includes kube::api<Pod>.
  T* p_ = nullptr;
};

/// A heap-allocated value with value semantics, for recursive types
/// (JSONSchemaProps.not). Copying copies the value. A moved-from box is
/// empty: only assignment and destruction are allowed on it.
template <class T>
class boxed {
public:
  boxed()
      : p_(std::make_unique<T>()) {}
  boxed(T v)
      : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT(google-explicit-constructor)
  boxed(const boxed& o)
      : p_(std::make_unique<T>(*o.p_)) {}
  boxed(boxed&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)) {}
  boxed& operator=(const boxed& o) {
    if (this != &o) p_ = std::make_unique<T>(*o.p_);
    return *this;
  }
  boxed& operator=(boxed&& o) noexcept {
    p_ = std::exchange(o.p_, nullptr);
    return *this;
  }
  ~boxed() = default;

  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }

private:
  std::unique_ptr<T> p_;
};

}  // namespace kube
