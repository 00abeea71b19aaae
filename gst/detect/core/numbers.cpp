#include "numbers.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace gpudetect {

namespace {
// The token without a leading "+" (from_chars takes none); false when empty.
bool digits (const std::string &t, const char **b, const char **e) {
  *b = t.data ();
  *e = t.data () + t.size ();
  if (*b != *e && **b == '+')
    ++*b;
  return *b != *e;
}
} // namespace

bool to_double (const std::string &t, double *v) {
  const char *b, *e;
  if (!digits (t, &b, &e) || (*b != '-' && *b != '.' && (*b < '0' || *b > '9')))
    return false;
  const auto r = std::from_chars (b, e, *v, std::chars_format::general);
  return r.ec == std::errc () && r.ptr == e && std::isfinite (*v);
}

bool to_float (const std::string &t, float *v) {
  double d;
  if (!to_double (t, &d) || !std::isfinite (static_cast<float> (d)))
    return false;
  *v = static_cast<float> (d);
  return true;
}

bool to_long (const std::string &t, long long *v) {
  const char *b, *e;
  if (!digits (t, &b, &e))
    return false;
  const auto r = std::from_chars (b, e, *v);
  return r.ec == std::errc () && r.ptr == e;
}

bool to_int (const std::string &t, long long lo, long long hi, int *v) {
  long long x = 0;
  if (!to_long (t, &x) || x < lo || x > hi)
    return false;
  *v = static_cast<int> (x);
  return true;
}

std::string number_text (double v) {
  char b[32];
  return {b, std::to_chars (b, b + sizeof b, v).ptr};
}

std::string float_text (float v) {
  char b[32];
  std::string s (b, std::to_chars (b, b + sizeof b, v).ptr);
  // The shortest float text may lie so close to the midpoint between two
  // floats that read as a double it rounds to the other; nine digits never do.
  double back = 0;
  if (!to_double (s, &back) || static_cast<float> (back) != v)
    s.assign (b, std::to_chars (b, b + sizeof b, static_cast<double> (v), std::chars_format::general, 9).ptr);
  return s;
}

std::string float_literal (float v) {
  char b[48];
  const double d = static_cast<double> (v);
  const std::to_chars_result r = std::to_chars (b, b + sizeof b, std::fabs (d), std::chars_format::hex);
  return std::string ("(") + (std::signbit (d) ? "-" : "") + "0x" + std::string (b, r.ptr) + "f)";
}

int64_t saturate_int64 (double v) {
  if (std::isnan (v))
    return 0;
  if (v >= 9.2e18)
    return INT64_MAX;
  if (v <= -9.2e18)
    return INT64_MIN;
  return static_cast<int64_t> (v);
}

std::string excerpt (const std::string &s) {
  constexpr size_t kMax = 64;
  if (s.size () <= kMax)
    return s;
  size_t n = kMax;
  while (n > 0 && (static_cast<unsigned char> (s[n]) & 0xC0) == 0x80)
    n--;
  return s.substr (0, n) + "...";
}

std::string quoted (const std::string &s) { return "'" + excerpt (s) + "'"; }

} // namespace gpudetect
