// The engine's one error convention: every call that can fail returns an
// Error, a value that is false when all went well and otherwise carries a
// message for people and a kind for callers that report by kind (the
// elements' GStreamer error domains).  No exceptions cross the engine's API.
#pragma once

#include <string>
#include <utility>

namespace gpudetect {

class Error {
public:
  // What failed, where a caller needs to tell (Detector::create, submit).
  // Resource: more device memory than the detector may hold (cl/budget.h)
  // or a buffer larger than the device allocates.  Interrupted: a wait cut
  // short (runtime::Interrupt).
  enum class Kind { Failed, Config, Model, Device, Build, Resource, Interrupted };

  Error () = default;
  Error (std::string message, Kind kind = Kind::Failed) : message (std::move (message)), kind (kind) {}
  Error (const char *message, Kind kind = Kind::Failed) : message (message), kind (kind) {}

  explicit operator bool () const { return !message.empty (); }
  // The same error, said to be of `k`.
  Error as (Kind k) && {
    kind = k;
    return std::move (*this);
  }

  std::string message;
  Kind kind = Kind::Failed;
};

} // namespace gpudetect
