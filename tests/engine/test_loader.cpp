// Model loader: every opencv-data cascade loads; malformed and hostile inputs are refused.
#include "check.h"
#include "core/models.h"
#include "families/cascade/model.h"

#include <algorithm>
#include <dirent.h>
#include <string>
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
  CHECK (label_for_model ("/x/haarcascade_fullbody.xml") == "person");
  return finish ();
}
