// Core pieces without a device: the tuning text, the registry's choice of
// family by content, and the decoding of candidates.
#include "check.h"
#include "core/candidates.h"
#include "core/tuning.h"
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
  // Tuning: every key, and errors that name the entry.
  {
    Tuning t;
    std::string e = parse_tuning ("schedule=cpu; upload-queue=1;read-prefix=2;build-options=-D A=1 -D B=2;"
                                  "cascade-first-stages=2;cascade-vector-stages=0;"
                                  "waldboost-divisors=8,4,2;waldboost-sync-first=3;waldboost-sync-step=5;",
                                  &t);
    CHECK_MSG (e.empty (), "%s", e.c_str ());
    CHECK (t.schedule == Tuning::Schedule::Cpu && t.upload_queue == 1 && t.read_prefix == 2);
    CHECK (t.build_options == "-D A=1 -D B=2" && t.cascade_first_stages == 2);
    CHECK (t.cascade_vector_stages == 0);
    CHECK ((t.waldboost_divisors == std::vector<int>{8, 4, 2}) && t.waldboost_sync_first == 3 &&
           t.waldboost_sync_step == 5);
    Tuning u = t;
    CHECK (parse_tuning ("upload-queue=7", &u).find ("upload-queue=7") != std::string::npos);
    CHECK (parse_tuning ("no-such-key=1", &u).find ("unknown tuning key 'no-such-key'") != std::string::npos);
    CHECK (parse_tuning ("schedule", &u).find ("not key=value") != std::string::npos);
    CHECK (parse_tuning ("waldboost-divisors=8,0", &u).find ("divisors") != std::string::npos);
    CHECK (parse_tuning ("waldboost-divisors=1,2,3,4,5,6,7", &u).find ("divisors") != std::string::npos);
    CHECK (u.upload_queue == 1 && u.waldboost_divisors.size () == 3); // unchanged by a refused text
    CHECK (u.hog_eval == Tuning::HogEval::Auto);
    CHECK (parse_tuning ("hog-eval=fft", &u).empty () && u.hog_eval == Tuning::HogEval::Fft);
    CHECK (parse_tuning ("hog-eval=direct", &u).empty () && u.hog_eval == Tuning::HogEval::Direct);
    CHECK (parse_tuning ("hog-eval=auto", &u).empty () && u.hog_eval == Tuning::HogEval::Auto);
    CHECK (parse_tuning ("hog-eval=fast", &u).find ("expected direct, fft or auto") != std::string::npos);
    setenv ("GPUDETECT_TUNING", "schedule=gpu;read-prefix=5", 1);
    CHECK (make_tuning ("read-prefix=7", &u).empty ());
    CHECK (u.schedule == Tuning::Schedule::Gpu && u.read_prefix == 7 && u.upload_queue == -1);
    setenv ("GPUDETECT_TUNING", "bogus", 1);
    CHECK (make_tuning ("", &u).find ("GPUDETECT_TUNING") != std::string::npos);
    unsetenv ("GPUDETECT_TUNING");
  }

  // The registry: a cascade by its content whatever its name; other content
  // refused with the formats it knows.
  {
    std::unique_ptr<Family> f;
    std::string e = load_family ("/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml", &f);
    CHECK_MSG (e.empty () && f, "%s", e.c_str ());
    if (f) {
      CHECK (f->info ().family == "cascade" && f->info ().label == "face");
      CHECK (f->info ().window.width == 45 && f->info ().window.height == 45);
    }
    const std::string other = write_temp ("<?xml version=\"1.0\"?><somethingElse/>");
    e = load_family (other, &f);
    CHECK_MSG (e.find ("none of the formats") != std::string::npos && e.find ("OpenCV cascade") != std::string::npos,
               "%s", e.c_str ());
    unlink (other.c_str ());
    const std::string garbage = write_temp ("\x01\x02 not xml");
    e = load_family (garbage, &f);
    CHECK_MSG (e.find ("not well-formed") != std::string::npos, "%s", e.c_str ());
    unlink (garbage.c_str ());
    e = load_family ("/nonexistent/model.xml", &f);
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
