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

// What a family's reader takes: an XML file's root element, or another
// file's text.
template <typename Source> Source source_of (const ModelText &m);
template <> const xmlNode *source_of<const xmlNode *> (const ModelText &m) { return m.root; }
template <> const std::string &source_of<const std::string &> (const ModelText &m) { return m.text; }

// A model: read by its family's reader, named after its file, made into the
// family.
template <typename Model, typename Source>
Error make_family (const ModelText &m, Error (*read) (Source, Model *), std::unique_ptr<Family> (*make) (Model),
                   std::unique_ptr<Family> *out) {
  Model model;
  if (Error e = read (source_of<Source> (m), &model))
    return e;
  name_after_file (m.path, &model);
  *out = make (std::move (model));
  return {};
}

template <typename Source> bool recognises (const ModelText &m, bool (*is) (Source)) {
  return is (source_of<Source> (m));
}

// The table's functions for a family's recogniser, reader and maker.
template <auto Is> bool is (const ModelText &m) { return recognises (m, Is); }
template <auto Read, auto Make> Error from (const ModelText &m, std::unique_ptr<Family> *out) {
  return make_family (m, Read, Make, out);
}

const Entry kFamilies[] = {
    {"an OpenCV cascade (<opencv_storage><cascade>)",
     is<is_cascade_storage>, from<read_cascade_storage, make_cascade_family>},
    {"a WaldBoost classifier (<WaldBoostClassifier>)",
     is<is_waldboost_native>, from<read_waldboost_native, make_waldboost_family>},
    {"an OpenCV xobjdetect WBDetector (<opencv_storage><waldboost><waldboost_params>)",
     is<is_waldboost_xobjdetect>, from<read_waldboost_xobjdetect, make_waldboost_family>},
    {"a cv::dpm model (<RootFilters>)",
     is<is_dpm_storage>, from<read_dpm_storage, make_dpm_family>},
    {"a random-forest cascade (first line 'gpudetect-forest 1')",
     is<is_forest_text>, from<parse_forest, make_forest_family>},
    {"linear HOG filters (first line 'gpudetect-hogfilter 1')",
     is<is_hogfilter_text>, from<parse_hogfilter, make_hogfilter_family>},
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
      return in_model_file (path, e);
    return {};
  }
  if (m.xml_error)
    return in_model_file (path, m.xml_error);
  return "model file '" + path + "' is none of the formats gpudetect reads: " + known_model_formats ();
}

} // namespace gpudetect
