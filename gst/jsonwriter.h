// One JSON text (RFC 8259) built in a string, for roijson's lines.  Valid
// JSON whatever it is given:
// - a number that is not finite (NaN, ±infinity) is written as null;
// - a double is written in the shortest form that reads back to the same
//   value, with ".0" where that form has neither a point nor an exponent (so
//   that it stays a floating-point number to typed readers);
// - a string (a value or a member name) is written as UTF-8, each byte that
//   is not part of valid UTF-8 replaced by U+FFFD, '"', '\' and control
//   characters escaped.
// Commas and colons are the writer's: the caller opens, writes and closes in
// order (key () before each member of an object).  Plain C++ and GLib (its
// UTF-8 validation), no GStreamer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

class JsonWriter {
public:
  void begin_object ();
  void end_object ();
  void begin_array ();
  void end_array ();
  void key (std::string_view name);
  void string (std::string_view s);
  void integer (int64_t v);
  void number (double v);
  void boolean (bool v);
  void null ();

  // The text so far (a whole JSON text once every container is closed).
  const std::string &text () const { return out_; }

private:
  void value (); // a value starts: its comma where it follows another
  void quote (std::string_view s);
  std::string out_;
  std::vector<bool> empty_; // per open container: nothing in it yet
  bool after_key_ = false;
};
