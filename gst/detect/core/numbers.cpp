#include "numbers.h"

#include <charconv>
#include <cmath>

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
