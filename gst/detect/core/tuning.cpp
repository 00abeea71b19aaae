#include "tuning.h"

#include "numbers.h"

#include <algorithm>
#include <cstdlib>

namespace gpudetect {

namespace {

std::string trim (const std::string &s) {
  size_t a = s.find_first_not_of (" \t\n"), b = s.find_last_not_of (" \t\n");
  return a == std::string::npos ? std::string () : s.substr (a, b - a + 1);
}

} // namespace

Error parse_tuning (const std::string &text, Tuning *out, const std::vector<std::string> &family_keys) {
  Tuning t = *out;
  size_t start = 0;
  while (start <= text.size ()) {
    size_t end = text.find (';', start);
    if (end == std::string::npos)
      end = text.size ();
    const std::string entry = trim (text.substr (start, end - start));
    start = end + 1;
    if (entry.empty ())
      continue;
    const size_t eq = entry.find ('=');
    if (eq == std::string::npos)
      return "tuning entry " + quoted (entry) + " is not key=value";
    const std::string key = trim (entry.substr (0, eq)), value = trim (entry.substr (eq + 1));
    auto bad = [&] (const char *want) { return "tuning entry " + quoted (entry) + ": " + want; };
    if (key == "schedule") {
      if (value == "gpu")
        t.schedule = Tuning::Schedule::Gpu;
      else if (value == "cpu")
        t.schedule = Tuning::Schedule::Cpu;
      else if (value == "auto")
        t.schedule = Tuning::Schedule::Auto;
      else
        return bad ("expected gpu, cpu or auto");
    } else if (key == "upload-queue") {
      if (!to_int (value, 0, 2, &t.upload_queue))
        return bad ("expected 0, 1 or 2");
    } else if (key == "queues") {
      if (!to_int (value, 0, 64, &t.queues))
        return bad ("expected 0 to 64");
    } else if (key == "read-prefix") {
      if (!to_int (value, 0, 1 << 24, &t.read_prefix))
        return bad ("expected a count");
    } else if (key == "build-options") {
      t.build_options = value;
    } else if (std::find (family_keys.begin (), family_keys.end (), key) != family_keys.end ()) {
      t.family[key] = value;
    } else {
      return "unknown tuning key " + quoted (key);
    }
  }
  *out = t;
  return {};
}

Error make_tuning (const std::string &config, Tuning *t, const std::vector<std::string> &family_keys) {
  *t = Tuning ();
  if (const char *env = std::getenv ("GPUDETECT_TUNING"))
    if (Error e = parse_tuning (env, t, family_keys))
      return "GPUDETECT_TUNING: " + e.message;
  return parse_tuning (config, t, family_keys);
}

namespace {
const std::string *family_value (const Tuning &t, const std::string &key) {
  auto it = t.family.find (key);
  return it == t.family.end () ? nullptr : &it->second;
}
Error bad_entry (const std::string &key, const std::string &value, const std::string &want) {
  return "tuning entry " + quoted (key + "=" + value) + ": expected " + want;
}
} // namespace

Error tuning_int (const Tuning &t, const std::string &key, int lo, int hi, int *out) {
  const std::string *v = family_value (t, key);
  if (v && !to_int (*v, lo, hi, out))
    return bad_entry (key, *v, std::to_string (lo) + " to " + std::to_string (hi));
  return {};
}

Error tuning_list (const Tuning &t, const std::string &key, size_t max, int lo, int hi, bool increasing, bool none,
                   const char *what, std::vector<int> *out, bool *set) {
  const std::string *v = family_value (t, key);
  if (set)
    *set = v != nullptr;
  if (!v)
    return {};
  const std::string want = std::string (none ? "none or " : "") + "1 to " + std::to_string (max) + " " + what +
                           " in [" + std::to_string (lo) + ", " + std::to_string (hi) + "], comma separated";
  std::vector<int> r;
  if (none && *v == "none") {
    *out = r;
    return {};
  }
  size_t p = 0;
  while (p <= v->size ()) {
    size_t q = v->find (',', p);
    if (q == std::string::npos)
      q = v->size ();
    int x;
    if (r.size () == max || !to_int (trim (v->substr (p, q - p)), lo, hi, &x) ||
        (increasing && !r.empty () && x <= r.back ()))
      return bad_entry (key, *v, want);
    r.push_back (x);
    p = q + 1;
  }
  *out = r;
  return {};
}

Error tuning_choice (const Tuning &t, const std::string &key, const std::vector<std::string> &choices, int *out) {
  const std::string *v = family_value (t, key);
  if (!v)
    return {};
  for (size_t i = 0; i < choices.size (); i++)
    if (*v == choices[i]) {
      *out = static_cast<int> (i);
      return {};
    }
  std::string want;
  for (size_t i = 0; i < choices.size (); i++)
    want += (i == 0 ? "" : i + 1 == choices.size () ? " or " : ", ") + choices[i];
  return bad_entry (key, *v, want);
}

} // namespace gpudetect
