// Core pieces without a device: the tuning text and the families' knobs, the
// registry's choice of family by content, and the decoding of candidates.
#include "check.h"
#include "core/candidates.h"
#include "core/tuning.h"
#include "detector.h"
#include "families/hogfilter/fftconv.h"
#include "families/registry.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

using namespace gpudetect;

static std::string write_temp (const std::string &text) {
  char path[] = "/tmp/gpudetect-test-XXXXXX";
  const int fd = mkstemp (path);
  if (fd < 0)
    return {};
  if (write (fd, text.data (), text.size ()) != static_cast<ssize_t> (text.size ()))
    std::perror ("write");
  close (fd);
  return path;
}

int main () {
  // Tuning: every key, and errors that name the entry.  The families' knobs
  // are kept as written and read and checked by the family that declares
  // them.
  {
    const std::vector<std::string> &keys = family_option_keys ();
    Tuning t;
    Error e = parse_tuning ("schedule=cpu; upload-queue=1;read-prefix=2;build-options=-D A=1 -D B=2;"
                            "cascade-first-stages=2;cascade-vector-stages=0;"
                            "waldboost-divisors=8,4,2;waldboost-sync-first=3;waldboost-sync-step=5;hog-eval=fft",
                            &t, keys);
    CHECK_MSG (!e, "%s", e.message.c_str ());
    CHECK (t.schedule == Tuning::Schedule::Cpu && t.upload_queue == 1 && t.read_prefix == 2);
    CHECK (t.build_options == "-D A=1 -D B=2" && t.family.size () == 6 && t.family.at ("waldboost-divisors") == "8,4,2");
    int first = 0, vec = -1, sync = 0;
    std::vector<int> divisors;
    CHECK (!tuning_int (t, "cascade-first-stages", 1, 64, &first) && first == 2);
    CHECK (!tuning_int (t, "cascade-vector-stages", 0, 100000, &vec) && vec == 0);
    CHECK (!tuning_int (t, "waldboost-sync-step", 1, 100000, &sync) && sync == 5);
    CHECK (!tuning_list (t, "waldboost-divisors", 6, 1, 1024, false, false, "divisors", &divisors) &&
           (divisors == std::vector<int>{8, 4, 2}));
    HogEval eval = HogEval::Auto;
    CHECK (!hog_eval_option (t, &eval) && eval == HogEval::Fft);
    Tuning u = t;
    CHECK (parse_tuning ("upload-queue=7", &u, keys).message.find ("upload-queue=7") != std::string::npos);
    CHECK (parse_tuning ("no-such-key=1", &u, keys).message.find ("unknown tuning key 'no-such-key'") !=
           std::string::npos);
    CHECK (parse_tuning ("cascade-first-stages=2", &u).message.find ("unknown tuning key") != std::string::npos);
    CHECK (parse_tuning ("schedule", &u, keys).message.find ("not key=value") != std::string::npos);
    CHECK (u.upload_queue == 1 && u.family == t.family); // unchanged by a refused text
    // values a family refuses, named with the entry
    auto refused = [&] (const std::string &text, const char *want) {
      Tuning k;
      if (Error pe = parse_tuning (text, &k, keys))
        return pe.message.find (want) != std::string::npos;
      std::vector<int> list;
      int v = 0;
      bool set = false;
      HogEval h;
      Error fe = tuning_list (k, "waldboost-divisors", 6, 1, 1024, false, false, "divisors", &list);
      if (!fe)
        fe = tuning_list (k, "forest-regroup", 4, 1, 100000, true, true, "increasing stages", &list, &set);
      if (!fe)
        fe = tuning_int (k, "cascade-first-stages", 1, 64, &v);
      if (!fe)
        fe = hog_eval_option (k, &h);
      return fe && fe.message.find (text) != std::string::npos && fe.message.find (want) != std::string::npos;
    };
    CHECK (refused ("waldboost-divisors=8,0", "expected 1 to 6 divisors in [1, 1024]"));
    CHECK (refused ("waldboost-divisors=1,2,3,4,5,6,7", "divisors"));
    CHECK (refused ("forest-regroup=5,3", "expected none or 1 to 4 increasing stages"));
    CHECK (refused ("cascade-first-stages=0", "expected 1 to 64"));
    CHECK (refused ("hog-eval=fast", "expected direct, fft or auto"));
    {
      Tuning k;
      std::vector<int> list = {1};
      bool set = false;
      CHECK (!parse_tuning ("forest-regroup=none", &k, keys) &&
             !tuning_list (k, "forest-regroup", 4, 1, 100000, true, true, "increasing stages", &list, &set) && set &&
             list.empty ());
    }
    setenv ("GPUDETECT_TUNING", "schedule=gpu;read-prefix=5", 1);
    CHECK (!make_tuning ("read-prefix=7", &u));
    CHECK (u.schedule == Tuning::Schedule::Gpu && u.read_prefix == 7 && u.upload_queue == -1);
    setenv ("GPUDETECT_TUNING", "bogus", 1);
    CHECK (make_tuning ("", &u).message.find ("GPUDETECT_TUNING") != std::string::npos);
    unsetenv ("GPUDETECT_TUNING");
    // Detector::create: a family's knob out of range is a configuration
    // error, before any device is opened
    DetectorConfig c;
    c.model = "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml";
    c.tuning = "cascade-first-stages=65";
    std::unique_ptr<Detector> d;
    Error ce = Detector::create (c, &d);
    CHECK_MSG (ce && ce.kind == Error::Kind::Config && ce.message.find ("cascade-first-stages=65") != std::string::npos,
               "%s", ce.message.c_str ());
  }

  // The registry: a cascade by its content whatever its name; other content
  // refused with the formats it knows.
  {
    std::unique_ptr<Family> f;
    std::string e = load_family ("/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml", &f).message;
    CHECK_MSG (e.empty () && f, "%s", e.c_str ());
    if (f) {
      CHECK (f->info ().family == "cascade" && f->info ().label == "face");
      CHECK (f->info ().window.width == 45 && f->info ().window.height == 45);
    }
    const std::string other = write_temp ("<?xml version=\"1.0\"?><somethingElse/>");
    e = load_family (other, &f).message;
    CHECK_MSG (e.find ("none of the formats") != std::string::npos && e.find ("OpenCV cascade") != std::string::npos,
               "%s", e.c_str ());
    unlink (other.c_str ());
    const std::string garbage = write_temp ("\x01\x02 not xml");
    e = load_family (garbage, &f).message;
    CHECK_MSG (e.find ("not well-formed") != std::string::npos, "%s", e.c_str ());
    unlink (garbage.c_str ());
    e = load_family ("/nonexistent/model.xml", &f).message;
    CHECK_MSG (e.find ("cannot open") != std::string::npos, "%s", e.c_str ());
  }

  // Candidates: sorted by window, decoded to level and position, scores kept
  // with their windows, indices outside the geometry dropped.
  {
    PyramidGeometry g = plan_pyramid (100, 80, 24, 24, 1.25, {0, 0}, {0, 0});
    CHECK (g.levels.size () >= 2);
    const PyramidLevel &l1 = g.levels[1];
    const float s1 = 1.5f, s0 = -2.25f;
    uint32_t b0, b1;
    std::memcpy (&b0, &s0, 4);
    std::memcpy (&b1, &s1, 4);
    const uint32_t w1 = static_cast<uint32_t> (l1.first_window + l1.nx + 2); // level 1, row 1, column 2
    const uint32_t pairs[] = {w1, b1, 3, b0, static_cast<uint32_t> (g.total_windows + 5), b0};
    std::vector<RawHit> h = decode_candidates (g, pairs, 3);
    CHECK (h.size () == 2);
    if (h.size () == 2) {
      CHECK (h[0].level == 0 && h[0].x == 3 * g.levels[0].step && h[0].y == 0 && h[0].score == s0);
      CHECK (h[1].level == 1 && h[1].x == 2 * l1.step && h[1].y == l1.step && h[1].score == s1);
      CHECK (h[1].rect.width == l1.win_width && h[1].rect.height == l1.win_height);
    }
  }
  return finish ();
}
