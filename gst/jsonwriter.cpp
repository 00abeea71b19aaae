#include "jsonwriter.h"

#include <glib.h>

#include <charconv>
#include <cmath>
#include <cstdio>

void JsonWriter::value ()
{
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!empty_.empty ()) {
    if (!empty_.back ())
      out_ += ',';
    empty_.back () = false;
  }
}

void JsonWriter::begin_object ()
{
  value ();
  out_ += '{';
  empty_.push_back (true);
}

void JsonWriter::end_object ()
{
  out_ += '}';
  empty_.pop_back ();
}

void JsonWriter::begin_array ()
{
  value ();
  out_ += '[';
  empty_.push_back (true);
}

void JsonWriter::end_array ()
{
  out_ += ']';
  empty_.pop_back ();
}

void JsonWriter::key (std::string_view name)
{
  value ();
  quote (name);
  out_ += ':';
  after_key_ = true;
}

void JsonWriter::string (std::string_view s)
{
  value ();
  quote (s);
}

void JsonWriter::integer (int64_t v)
{
  value ();
  out_ += std::to_string (v);
}

void JsonWriter::number (double v)
{
  value ();
  if (!std::isfinite (v)) {
    out_ += "null";
    return;
  }
  char buf[64];
  const std::to_chars_result r = std::to_chars (buf, buf + sizeof buf, v);
  const std::string_view s (buf, static_cast<size_t> (r.ptr - buf));
  out_ += s;
  if (s.find_first_of (".e") == std::string_view::npos)
    out_ += ".0";
}

void JsonWriter::boolean (bool v)
{
  value ();
  out_ += v ? "true" : "false";
}

void JsonWriter::null ()
{
  value ();
  out_ += "null";
}

void JsonWriter::quote (std::string_view s)
{
  // valid UTF-8 (an embedded NUL counts as invalid: replaced too)
  gchar *valid = nullptr;
  if (!g_utf8_validate_len (s.data (), s.size (), nullptr)) {
    valid = g_utf8_make_valid (s.data (), static_cast<gssize> (s.size ()));
    s = valid;
  }
  out_ += '"';
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char> (c);
    switch (c) {
    case '"': out_ += "\\\""; break;
    case '\\': out_ += "\\\\"; break;
    case '\b': out_ += "\\b"; break;
    case '\f': out_ += "\\f"; break;
    case '\n': out_ += "\\n"; break;
    case '\r': out_ += "\\r"; break;
    case '\t': out_ += "\\t"; break;
    default:
      if (u < 0x20) {
        char esc[8];
        std::snprintf (esc, sizeof esc, "\\u%04x", u);
        out_ += esc;
      } else {
        out_ += c;
      }
    }
  }
  out_ += '"';
  g_free (valid);
}
