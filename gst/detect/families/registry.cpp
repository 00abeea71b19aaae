#include "registry.h"

#include "cascade/family.h"
#include "dpm/family.h"
#include "forest/family.h"
#include "hogfilter/family.h"
#include "hogfilter/fftconv.h"
#include "waldboost/family.h"
#include "core/models.h"
#include "core/xml.h"

namespace gpudetect {

namespace {

// A model file as the families see it when they are asked whether it is
// theirs: its path, its text, and its root element where it is XML.
struct ModelText {
  std::string path, text;
  xml::Doc doc;
  const xmlNode *root = nullptr;
  Error xml_error; // why it is not XML, if it is not
};

struct Entry {
  const char *format;
  bool (*recognises) (const ModelText &m);
  Error (*make) (const ModelText &m, std::unique_ptr<Family> *out);
};

// An XML model: read by its family's loader, named after its file, made
// into the family.
template <typename Model, Error (*Read) (const xmlNode *, Model *),
          std::unique_ptr<Family> (*Make) (Model)>
Error from_xml (const ModelText &m, std::unique_ptr<Family> *out) {
  Model model;
  if (Error e = Read (m.root, &model))
    return e;
  model.path = m.path;
  model.default_label = label_for_model (m.path);
  *out = Make (std::move (model));
  return {};
}

// A random-forest cascade (text, families/forest/csv.cpp).
Error from_forest (const ModelText &m, std::unique_ptr<Family> *out) {
  ForestModel model;
  if (Error e = parse_forest (m.text, &model))
    return e;
  model.path = m.path;
  model.default_label = label_for_model (m.path);
  *out = make_forest_family (std::move (model));
  return {};
}

// Linear HOG filters (text, families/hogfilter/text.cpp).
Error from_hogfilter (const ModelText &m, std::unique_ptr<Family> *out) {
  HogFilterModel model;
  if (Error e = parse_hogfilter (m.text, &model))
    return e;
  model.path = m.path;
  model.default_label = label_for_model (m.path);
  *out = make_hogfilter_family (std::move (model));
  return {};
}

const Entry kFamilies[] = {
    {"an OpenCV cascade (<opencv_storage><cascade>)",
     [] (const ModelText &m) { return is_cascade_storage (m.root); },
     from_xml<CascadeModel, read_cascade_storage, make_cascade_family>},
    {"a WaldBoost classifier (<WaldBoostClassifier>)",
     [] (const ModelText &m) { return is_waldboost_native (m.root); },
     from_xml<WaldBoostModel, read_waldboost_native, make_waldboost_family>},
    {"an OpenCV xobjdetect WBDetector (<opencv_storage><waldboost><waldboost_params>)",
     [] (const ModelText &m) { return is_waldboost_xobjdetect (m.root); },
     from_xml<WaldBoostModel, read_waldboost_xobjdetect, make_waldboost_family>},
    {"a cv::dpm model (<RootFilters>)",
     [] (const ModelText &m) { return is_dpm_storage (m.root); },
     from_xml<DpmModel, read_dpm_storage, make_dpm_family>},
    {"a random-forest cascade (first line 'gpudetect-forest 1')",
     [] (const ModelText &m) { return is_forest_text (m.text); }, from_forest},
    {"linear HOG filters (first line 'gpudetect-hogfilter 1')",
     [] (const ModelText &m) { return is_hogfilter_text (m.text); }, from_hogfilter},
};

} // namespace

const std::vector<std::string> &family_option_keys () {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto *list : {&cascade_option_keys (), &waldboost_option_keys (), &forest_option_keys ()})
      k.insert (k.end (), list->begin (), list->end ());
    k.push_back (kHogEvalKey);
    return k;
  }();
  return keys;
}

std::string known_model_formats () {
  std::string s;
  const size_t n = sizeof kFamilies / sizeof kFamilies[0];
  for (size_t i = 0; i < n; i++)
    s += (i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string (kFamilies[i].format);
  return s;
}

Error load_family (const std::string &path, std::unique_ptr<Family> *out) {
  std::string text;
  if (Error e = read_model_file (path, &text))
    return e;
  return load_family_text (path, text, out);
}

Error load_family_text (const std::string &path, const std::string &text, std::unique_ptr<Family> *out) {
  ModelText m;
  m.path = path;
  m.text = text;
  m.xml_error = xml::parse (m.text, &m.doc);
  m.root = xml::root (m.doc);
  for (const Entry &f : kFamilies) {
    if (!f.recognises (m))
      continue;
    if (Error e = f.make (m, out))
      return "model file '" + path + "': " + e.message;
    return {};
  }
  if (m.xml_error)
    return "model file '" + path + "': " + m.xml_error.message;
  return "model file '" + path + "' is none of the formats gpudetect reads: " + known_model_formats ();
}

} // namespace gpudetect
