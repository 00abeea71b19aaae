// Model loader: every opencv-data cascade loads; malformed and hostile inputs
// are refused; names not found are answered with the nearest ones; every
// short name the README gives is listed and loads.
#include "check.h"
#include "core/family.h"
#include "core/models.h"
#include "families/cascade/model.h"
#include "families/registry.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace gpudetect;

static std::vector<std::string> files_in (const std::string &dir) {
  std::vector<std::string> v;
  if (DIR *d = opendir (dir.c_str ())) {
    while (dirent *e = readdir (d)) {
      std::string n = e->d_name;
      if (n.size () > 4 && n.substr (n.size () - 4) == ".xml")
        v.push_back (dir + "/" + n);
    }
    closedir (d);
  }
  return v;
}

static const char *kValidLbp = R"(<?xml version="1.0"?>
<opencv_storage><cascade><stageType>BOOST</stageType><featureType>LBP</featureType>
<height>6</height><width>6</width><featureParams><maxCatCount>256</maxCatCount></featureParams>
<stages><_><maxWeakCount>1</maxWeakCount><stageThreshold>-0.5</stageThreshold><weakClassifiers>
<_><internalNodes>0 -1 0 1 2 3 4 5 6 7 8</internalNodes><leafValues>-1. 1.</leafValues></_>
</weakClassifiers></_></stages>
<features><_><rect>0 0 2 2</rect></_></features></cascade></opencv_storage>)";

static std::string replace (std::string s, const std::string &from, const std::string &to) {
  size_t p = s.find (from);
  if (p != std::string::npos)
    s.replace (p, from.size (), to);
  return s;
}

static double secs_since (std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double> (std::chrono::steady_clock::now () - t0).count ();
}

static bool has (const std::string &s, const std::string &part) { return s.find (part) != std::string::npos; }

// Paths that are not regular files are refused, saying what they are,
// without ever opening one for reading (a FIFO with no writer would block);
// long names are cut in messages.
static void not_regular_files () {
  char dir_template[] = "/tmp/gpudetect-loader-XXXXXX";
  const char *dir = mkdtemp (dir_template);
  CHECK (dir != nullptr);
  if (!dir)
    return;
  const std::string d = dir, fifo = d + "/model.fifo", zero = d + "/zero.xml", sub = d + "/subdir.xml";
  CHECK (mkfifo (fifo.c_str (), 0600) == 0);
  CHECK (symlink ("/dev/zero", zero.c_str ()) == 0);
  CHECK (mkdir (sub.c_str (), 0700) == 0);
  const auto t0 = std::chrono::steady_clock::now ();
  struct Case {
    std::string path, words;
    FileKind kind;
  };
  for (const Case &c : {Case{fifo, "is a FIFO, not a regular file", FileKind::Fifo},
                        Case{zero, "is a character device, not a regular file (a symbolic link to '/dev/zero')",
                             FileKind::CharDevice},
                        Case{sub, "is a directory, not a regular file", FileKind::Directory}}) {
    CHECK (file_kind (c.path) == c.kind);
    CHECK (resolve_model (c.path).empty ());
    std::string why;
    CHECK (unresolved_model (c.path, &why) == c.kind);
    CHECK_MSG (has (why, "model '" + c.path + "' " + c.words), "%s", why.c_str ());
    std::string text;
    const std::string err = read_model_file (c.path, &text).message;
    CHECK_MSG (has (err, "model file '" + c.path + "' " + c.words), "%s", err.c_str ());
    CascadeModel m;
    CHECK (has (load_cascade_file (c.path, &m).message, c.words));
  }
  // found on the search path, but not a regular file: that candidate named
  const char *env = std::getenv ("GPUDETECT_MODEL_PATH");
  const std::string saved = env ? env : "";
  setenv ("GPUDETECT_MODEL_PATH", d.c_str (), 1);
  std::string why;
  CHECK (unresolved_model ("model.fifo", &why) == FileKind::Fifo);
  CHECK_MSG (has (why, "model 'model.fifo': '" + fifo + "' is a FIFO"), "%s", why.c_str ());
  CHECK (unresolved_model ("subdir", &why) == FileKind::Directory);
  CHECK (unresolved_model ("no-such-model", &why) == FileKind::Missing);
  CHECK_MSG (has (why, "model 'no-such-model' not found (searched " + d + ", "), "%s", why.c_str ());
  CHECK (secs_since (t0) < 5);

  // A 5000-byte name: cut to 200 bytes and "…" wherever it is quoted.
  const std::string long_name (5000, 'm');
  const std::string cut = std::string (200, 'm') + "\xe2\x80\xa6";
  CHECK (name_for_message (long_name) == cut);
  CHECK (unresolved_model (long_name, &why) == FileKind::TooLong);
  CHECK_MSG (has (why, "model name '" + cut + "' (5000 bytes) is too long for a file name") && why.size () < 400,
             "%zu bytes: %.300s", why.size (), why.c_str ());
  const std::string long_path = d + "/" + long_name;
  CHECK (unresolved_model (long_path, &why) == FileKind::TooLong);
  CHECK_MSG (why.size () < 400, "%zu bytes", why.size ());
  std::string text;
  const std::string err = read_model_file (long_path, &text).message;
  CHECK_MSG (has (err, "File name too long") && err.size () < 400, "%zu bytes: %.300s", err.size (), err.c_str ());
  // never cut inside a UTF-8 character: 199 bytes then a 3-byte one
  CHECK (name_for_message (std::string (199, 'a') + "\xe2\x82\xac" + "b") == std::string (199, 'a') + "\xe2\x80\xa6");
  CHECK (name_for_message ("short") == "short");

  unlink (fifo.c_str ());
  unlink (zero.c_str ());
  rmdir (sub.c_str ());
  rmdir (dir);
  if (env)
    setenv ("GPUDETECT_MODEL_PATH", saved.c_str (), 1);
  else
    unsetenv ("GPUDETECT_MODEL_PATH");
}

int main () {
  // Every cascade Debian's opencv-data ships.
  std::vector<std::string> all = files_in ("/usr/share/opencv4/haarcascades");
  std::vector<std::string> lbp = files_in ("/usr/share/opencv4/lbpcascades");
  all.insert (all.end (), lbp.begin (), lbp.end ());
  CHECK_MSG (all.size () >= 22, "found %zu cascades: is opencv-data installed?", all.size ());
  int loaded = 0;
  for (const std::string &path : all) {
    CascadeModel m;
    std::string err = load_cascade_file (path, &m).message;
    if (path.find ("licence_plate_rus_16stages") != std::string::npos) {
      CHECK_MSG (err.find ("old-format") != std::string::npos, "%s: %s", path.c_str (), err.c_str ());
      continue;
    }
    CHECK_MSG (err.empty (), "%s: %s", path.c_str (), err.c_str ());
    if (!err.empty ())
      continue;
    loaded++;
    CHECK (!m.stages.empty () && m.window_width > 0 && m.window_height > 0);
    CHECK (m.feature_count () > 0 && !m.nodes.empty () && m.leaves.size () >= m.nodes.size () + m.trees.size ());
  }
  // Debian's opencv-data ships 22 cascades: 21 in the <cascade> format, all of which load.
  CHECK_MSG (loaded == static_cast<int> (all.size ()) - 1, "loaded %d of %zu", loaded, all.size ());

  // Known shapes.
  {
    CascadeModel m;
    CHECK (load_cascade_file ("/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt2.xml", &m).message.empty ());
    CHECK (m.feature_type == CascadeModel::FeatureType::Haar && m.max_nodes_per_tree == 2);
    CHECK (m.window_width == 20 && m.window_height == 20 && m.stages.size () == 20);
    CHECK (m.default_label == "face");
    // OpenCV lowers stage thresholds by 1e-5 (first stage of alt2: 0.3506923...)
    CHECK (m.stages[0].threshold == static_cast<float> (3.5069230198860168e-01) - 1e-5f);
  }
  {
    CascadeModel m;
    CHECK (load_cascade_file ("/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml", &m).message.empty ());
    CHECK (m.feature_type == CascadeModel::FeatureType::Lbp && m.ncategories == 256);
    CHECK (m.window_width == 45 && m.window_height == 45 && m.max_nodes_per_tree == 1);
  }
  {
    CascadeModel m;
    CHECK (load_cascade_file ("/usr/share/opencv4/haarcascades/haarcascade_upperbody.xml", &m).message.empty ());
    CHECK (m.has_tilted);
  }

  // A minimal valid model parses; each corruption of it is refused with a message.
  CascadeModel ok;
  CHECK (parse_cascade_xml (kValidLbp, &ok).message.empty ());
  CHECK (ok.nodes.size () == 1 && ok.nodes[0].subset[7] == 8u);
  struct Bad {
    std::string xml, expect;
  } bad[] = {
      {"", "empty"},
      {std::string (kValidLbp).substr (0, 200), "well-formed"},
      {"<a><b></a>", "well-formed"},
      {"<?xml version=\"1.0\"?><root/>", "opencv_storage"},
      {"<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
       "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]><opencv_storage><cascade><stageType>&c;</stageType>"
       "</cascade></opencv_storage>", ""}, // refused by the parser (entity loop) or by our DTD check
      {"<?xml version=\"1.0\"?><!DOCTYPE x SYSTEM \"http://example.com/x.dtd\"><opencv_storage/>", "document type"},
      {replace (kValidLbp, "BOOST", "GENTLE"), "stageType"},
      {replace (kValidLbp, "<featureType>LBP", "<featureType>HOG"), "featureType"},
      {replace (kValidLbp, "<width>6</width>", "<width>-6</width>"), "width"},
      {replace (kValidLbp, "<width>6</width>", ""), "width"},
      {replace (kValidLbp, "<maxCatCount>256", "<maxCatCount>0"), "maxCatCount"},
      {replace (kValidLbp, "0 -1 0 1 2 3 4 5 6 7 8", "0 -1 0 1 2 3"), "multiple"},
      {replace (kValidLbp, "0 -1 0 1 2 3 4 5 6 7 8", "0 -1 5 1 2 3 4 5 6 7 8"), "feature"},
      {replace (kValidLbp, "0 -1 0 1 2 3 4 5 6 7 8", "0 -7 0 1 2 3 4 5 6 7 8"), "child"},
      {replace (kValidLbp, "0 -1 0 1 2 3 4 5 6 7 8", "0 -1 0 1 2 3 4 5 6 7 99999999999"), "subset"},
      {replace (kValidLbp, "-1. 1.", "-1."), "leaf"},
      {replace (kValidLbp, "-1. 1.", "-1. nan"), "leaf"},
      {replace (kValidLbp, "<stageThreshold>-0.5", "<stageThreshold>x"), "stageThreshold"},
      {replace (kValidLbp, "<rect>0 0 2 2</rect>", "<rect>0 0 3 2</rect>"), "outside"},
      {replace (kValidLbp, "<rect>0 0 2 2</rect>", "<rect>0 0 2</rect>"), "4 integers"},
      {replace (kValidLbp, "<stages>", "<stagez>"), "well-formed"},
      {replace (replace (kValidLbp, "<stages>", "<stagez>"), "</stages>", "</stagez>"), "stages"},
  };
  for (const Bad &b : bad) {
    CascadeModel m;
    std::string err = parse_cascade_xml (b.xml, &m).message;
    CHECK_MSG (!err.empty () && err.find (b.expect) != std::string::npos, "expected '%s', got '%s'",
               b.expect.c_str (), err.c_str ());
  }
  {
    CascadeModel m;
    std::string err = load_cascade_file ("/nonexistent/model.xml", &m).message;
    CHECK (err.find ("cannot open") != std::string::npos);
  }

  // Short names resolve through the search path.
  CHECK (resolve_model ("lbp-frontalface-improved").find ("lbpcascade_frontalface_improved.xml") != std::string::npos);
  CHECK (resolve_model ("haar-frontalface-default").find ("haarcascade_frontalface_default.xml") != std::string::npos);
  CHECK (resolve_model ("haarcascade_eye.xml").find ("/haarcascade_eye.xml") != std::string::npos);
  CHECK (resolve_model ("no-such-model").empty ());
  std::vector<std::string> names = list_models ();
  CHECK (std::find (names.begin (), names.end (), "haar-frontalface-alt2") != names.end ());
  // A name not found is answered with the nearest names.
  {
    std::string why;
    unresolved_model ("lbp-frontalfce-improved", &why);
    CHECK_MSG (why.find ("did you mean lbp-frontalface-improved") != std::string::npos, "%s", why.c_str ());
    unresolved_model ("frontalcatface", &why);
    CHECK_MSG (why.find ("haar-frontalcatface") != std::string::npos && why.find ("gpudetect-models") != std::string::npos,
               "%s", why.c_str ());
    unresolved_model ("zzzzzzzzzzzzzzzz", &why);
    CHECK_MSG (why.find ("did you mean") == std::string::npos, "%s", why.c_str ());
    const std::vector<std::string> near = similar_models ("haar-eye-tree-eyglasses", 3);
    CHECK (!near.empty () && near[0] == "haar-eye-tree-eyeglasses");
  }
  // Every short name the README gives is listed and loads (the built models
  // too: found beside the test's folder, build/models).
  {
    std::ifstream readme (GPUDETECT_TEST_DATA "/../../README.md");
    std::string text ((std::istreambuf_iterator<char> (readme)), std::istreambuf_iterator<char> ());
    CHECK (!text.empty ());
    const size_t from = text.find ("## Models"), to = text.find ("\n## ", from + 1);
    const std::string section = text.substr (from, to - from);
    int checked = 0;
    for (size_t at = section.find ('`'); at != std::string::npos; at = section.find ('`', at + 1)) {
      const size_t end = section.find ('`', at + 1);
      if (end == std::string::npos)
        break;
      const std::string n = section.substr (at + 1, end - at - 1);
      at = end;
      static const char *const prefixes[] = {"lbp-", "haar-", "dpm-", "waldboost-", "forest-", "dlib-", "hog-"};
      bool is_name = n.find_first_of (" /.=") == std::string::npos && n.find ("NAME") == std::string::npos;
      bool prefixed = false;
      for (const char *p : prefixes)
        prefixed = prefixed || n.compare (0, std::strlen (p), p) == 0;
      if (!is_name || !prefixed)
        continue;
      checked++;
      CHECK_MSG (std::find (names.begin (), names.end (), n) != names.end (), "README's %s is not listed", n.c_str ());
      std::unique_ptr<Family> f;
      const Error e = load_family (resolve_model (n), &f);
      CHECK_MSG (!e, "README's %s does not load: %s", n.c_str (), e.message.c_str ());
    }
    CHECK_MSG (checked >= 28, "%d short names found in the README", checked);
  }
  CHECK (label_for_model ("/x/haarcascade_fullbody.xml") == "person");
  not_regular_files ();
  return finish ();
}
