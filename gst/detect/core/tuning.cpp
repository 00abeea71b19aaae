#include "tuning.h"

#include "numbers.h"


namespace gpudetect {

namespace {

std::string trim (const std::string &s) {
  size_t a = s.find_first_not_of (" \t\n"), b = s.find_last_not_of (" \t\n");
  return a == std::string::npos ? std::string () : s.substr (a, b - a + 1);
}

} // namespace

std::string parse_tuning (const std::string &text, Tuning *out) {
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
    } else if (key == "cascade-first-stages") {
      if (!to_int (value, 1, 64, &t.cascade_first_stages))
        return bad ("expected 1 to 64");
    } else if (key == "cascade-vector-stages") {
      if (!to_int (value, 0, 100000, &t.cascade_vector_stages))
        return bad ("expected a count");
    } else if (key == "waldboost-divisors") {
      std::vector<int> d;
      size_t p = 0;
      while (p <= value.size ()) {
        size_t q = value.find (',', p);
        if (q == std::string::npos)
          q = value.size ();
        int v;
        if (!to_int (trim (value.substr (p, q - p)), 1, 1024, &v))
          return bad ("expected 1 to 6 divisors in [1, 1024], comma separated");
        d.push_back (v);
        if (d.size () > 6)
          return bad ("expected 1 to 6 divisors in [1, 1024], comma separated");
        p = q + 1;
      }
      if (d.empty () || d.size () > 6)
        return bad ("expected 1 to 6 divisors in [1, 1024], comma separated");
      t.waldboost_divisors = d;
    } else if (key == "waldboost-sync-first") {
      if (!to_int (value, 1, 100000, &t.waldboost_sync_first))
        return bad ("expected 1 to 100000");
    } else if (key == "waldboost-sync-step") {
      if (!to_int (value, 1, 100000, &t.waldboost_sync_step))
        return bad ("expected 1 to 100000");
    } else if (key == "forest-regroup") {
      std::vector<int> r;
      const char *want = "expected none or 1 to 4 increasing stages in [1, 100000], comma separated";
      if (value != "none") {
        size_t p = 0;
        while (p <= value.size ()) {
          size_t q = value.find (',', p);
          if (q == std::string::npos)
            q = value.size ();
          int v;
          if (r.size () == 4 || !to_int (trim (value.substr (p, q - p)), 1, 100000, &v) || (!r.empty () && v <= r.back ()))
            return bad (want);
          r.push_back (v);
          p = q + 1;
        }
      }
      t.forest_regroup_set = true;
      t.forest_regroup = r;
    } else if (key == "hog-eval") {
      if (value == "direct")
        t.hog_eval = Tuning::HogEval::Direct;
      else if (value == "fft")
        t.hog_eval = Tuning::HogEval::Fft;
      else if (value == "auto")
        t.hog_eval = Tuning::HogEval::Auto;
      else
        return bad ("expected direct, fft or auto");
    } else {
      return "unknown tuning key " + quoted (key);
    }
  }
  *out = t;
  return {};
}

std::string make_tuning (const std::string &config, Tuning *t) {
  *t = Tuning ();
  if (const char *env = std::getenv ("GPUDETECT_TUNING"))
    if (std::string e = parse_tuning (env, t); !e.empty ())
      return "GPUDETECT_TUNING: " + e;
  return parse_tuning (config, t);
}

} // namespace gpudetect
