// Model names: search path, short names, default labels; reading files.
#include "models.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>

#ifndef GPUDETECT_MODELS_DIR
#define GPUDETECT_MODELS_DIR "/usr/local/share/gpudetect/models"
#endif

namespace gpudetect {

// cv::dpm's models of Debian's opencv-doc (inriaperson.xml: "dpm-inriaperson").
static const char *const kDpmModelsDir = "/usr/share/doc/opencv-doc/examples/dpm/data";

// Extensions of model files found by their stem.
static const char *const kModelExtensions[] = {".xml", ".forest", ".hogfilter"};

static bool ends_with (const std::string &s, const char *e) {
  const size_t n = std::strlen (e);
  return s.size () > n && s.compare (s.size () - n, n, e) == 0;
}

// The stem of a model file name ("" when it has none of the extensions).
static std::string model_stem (const std::string &f) {
  for (const char *e : kModelExtensions)
    if (ends_with (f, e))
      return f.substr (0, f.size () - std::strlen (e));
  return {};
}

static bool is_file (const std::string &p) {
  struct stat st;
  return stat (p.c_str (), &st) == 0 && S_ISREG (st.st_mode);
}

std::vector<std::string> model_search_path () {
  std::vector<std::string> dirs;
  if (const char *env = std::getenv ("GPUDETECT_MODEL_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size ()) {
      size_t end = s.find (':', start);
      if (end == std::string::npos)
        end = s.size ();
      if (end > start)
        dirs.push_back (s.substr (start, end - start));
      start = end + 1;
    }
  }
  for (const char *d : {GPUDETECT_MODELS_DIR, "/usr/share/opencv4/haarcascades", "/usr/share/opencv4/lbpcascades",
                        "/usr/share/opencv/haarcascades", "/usr/share/opencv/lbpcascades", kDpmModelsDir})
    dirs.push_back (d);
  return dirs;
}

// "lbp-frontalface-improved" -> "lbpcascade_frontalface_improved.xml",
// "dpm-inriaperson" -> "inriaperson.xml"
static std::string file_for_short_name (const std::string &name) {
  if (name.compare (0, 4, "dpm-") == 0 && name.size () > 4)
    return name.substr (4) + ".xml";
  for (const char *family : {"haar", "lbp"}) {
    std::string prefix = std::string (family) + "-";
    if (name.compare (0, prefix.size (), prefix) == 0 && name.size () > prefix.size ()) {
      std::string rest = name.substr (prefix.size ());
      std::replace (rest.begin (), rest.end (), '-', '_');
      return std::string (family) + "cascade_" + rest + ".xml";
    }
  }
  return {};
}

std::string resolve_model (const std::string &name, std::vector<std::string> *tried) {
  if (name.empty ())
    return {};
  auto check = [&] (const std::string &p) {
    if (tried)
      tried->push_back (p);
    return is_file (p);
  };
  if (name.find ('/') != std::string::npos)
    return check (name) ? name : std::string ();
  std::vector<std::string> files;
  std::string mapped = file_for_short_name (name);
  if (!mapped.empty ())
    files.push_back (mapped);
  files.push_back (name);
  if (model_stem (name).empty ())
    for (const char *e : kModelExtensions)
      files.push_back (name + e);
  for (const std::string &dir : model_search_path ())
    for (const std::string &f : files)
      if (check (dir + "/" + f))
        return dir + "/" + f;
  if (check (name))
    return name;
  return {};
}

std::vector<std::string> list_models () {
  std::vector<std::string> names;
  for (const std::string &dir : model_search_path ()) {
    DIR *d = opendir (dir.c_str ());
    if (!d)
      continue;
    while (dirent *e = readdir (d)) {
      std::string f = e->d_name;
      std::string stem = model_stem (f), name = stem;
      if (stem.empty () || !is_file (dir + "/" + f))
        continue;
      for (const char *family : {"haar", "lbp"}) {
        std::string prefix = std::string (family) + "cascade_";
        if (stem.compare (0, prefix.size (), prefix) == 0 && stem.size () > prefix.size ()) {
          std::string rest = stem.substr (prefix.size ());
          std::replace (rest.begin (), rest.end (), '_', '-');
          name = std::string (family) + "-" + rest;
        }
      }
      if (dir == kDpmModelsDir)
        name = "dpm-" + stem;
      names.push_back (name);
    }
    closedir (d);
  }
  std::sort (names.begin (), names.end ());
  names.erase (std::unique (names.begin (), names.end ()), names.end ());
  return names;
}

std::string label_for_model (const std::string &path) {
  std::string stem = path.substr (path.find_last_of ('/') == std::string::npos ? 0 : path.find_last_of ('/') + 1);
  if (!model_stem (stem).empty ())
    stem = model_stem (stem);
  static const std::pair<const char *, const char *> table[] = {
      {"catface", "cat-face"}, {"face", "face"},       {"eye", "eye"},
      {"smile", "smile"},      {"fullbody", "person"}, {"upperbody", "upper-body"},
      {"lowerbody", "lower-body"}, {"inriaperson", "person"}, {"plate", "license-plate"}, {"silverware", "silverware"},
      {"people", "person"},
  };
  for (const auto &[key, label] : table)
    if (stem.find (key) != std::string::npos)
      return label;
  return stem.empty () ? "object" : stem;
}

Error read_model_file (const std::string &path, std::string *out) {
  std::ifstream f (path, std::ios::binary);
  if (!f)
    return "cannot open model file '" + path + "': " + std::strerror (errno);
  f.seekg (0, std::ios::end);
  std::streamoff size = f.tellg ();
  if (size < 0)
    return "cannot read model file '" + path + "'";
  if (static_cast<size_t> (size) > kMaxModelFileBytes)
    return "model file '" + path + "' is larger than 64 MiB";
  f.seekg (0);
  out->assign (static_cast<size_t> (size), '\0');
  f.read (&(*out)[0], size);
  if (!f)
    return "cannot read model file '" + path + "'";
  return {};
}

Error in_model_file (const std::string &path, const Error &e) {
  return Error ("model file '" + path + "': " + e.message, e.kind);
}

bool ModelLines::next (std::string *line) {
  while (at_ < text_.size ()) {
    size_t end = text_.find ('\n', at_);
    if (end == std::string::npos)
      end = text_.size ();
    const size_t first = at_;
    at_ = end + 1;
    number_++;
    size_t i = first;
    while (i < end && is_model_blank (text_[i]))
      i++;
    if (i < end && text_[i] != '#') {
      line->assign (text_, first, end - first);
      return true;
    }
  }
  return false;
}

} // namespace gpudetect
