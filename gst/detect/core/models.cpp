// Model names: search path, short names, default labels; reading files.
#include "models.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

static bool is_file (const std::string &p) { return file_kind (p) == FileKind::Regular; }

static FileKind kind_of_mode (mode_t m) {
  if (S_ISREG (m))
    return FileKind::Regular;
  if (S_ISDIR (m))
    return FileKind::Directory;
  if (S_ISFIFO (m))
    return FileKind::Fifo;
  if (S_ISCHR (m))
    return FileKind::CharDevice;
  if (S_ISBLK (m))
    return FileKind::BlockDevice;
  if (S_ISSOCK (m))
    return FileKind::Socket;
  return FileKind::Other;
}

FileKind file_kind (const std::string &path) {
  struct stat st;
  if (stat (path.c_str (), &st) == 0)
    return kind_of_mode (st.st_mode);
  return errno == ENAMETOOLONG ? FileKind::TooLong : FileKind::Missing;
}

// What a path that is not a regular file is, after "is" ("" for a regular file).
static std::string kind_phrase (FileKind k) {
  switch (k) {
  case FileKind::Regular: return "";
  case FileKind::Missing: return "missing";
  case FileKind::TooLong: return "too long for a path";
  case FileKind::Directory: return "a directory, not a regular file";
  case FileKind::Fifo: return "a FIFO, not a regular file";
  case FileKind::CharDevice: return "a character device, not a regular file";
  case FileKind::BlockDevice: return "a block device, not a regular file";
  case FileKind::Socket: return "a socket, not a regular file";
  case FileKind::Other: break;
  }
  return "not a regular file";
}

static std::string quoted (const std::string &path) { return "'" + name_for_message (path) + "'"; }

// "'PATH' is a FIFO, not a regular file (a symbolic link to 'TARGET')"
static std::string path_is (const std::string &path, FileKind k) {
  std::string s = quoted (path) + " is " + kind_phrase (k);
  char target[4096];
  const ssize_t n = readlink (path.c_str (), target, sizeof target);
  if (n > 0 && static_cast<size_t> (n) < sizeof target)
    s += " (a symbolic link to " + quoted (std::string (target, static_cast<size_t> (n))) + ")";
  return s;
}

std::string name_for_message (const std::string &name, size_t max_bytes) {
  if (name.size () <= max_bytes)
    return name;
  size_t cut = max_bytes;
  // back to the first byte of a UTF-8 character (continuation bytes are 10xxxxxx)
  while (cut > 0 && (static_cast<unsigned char> (name[cut]) & 0xC0) == 0x80)
    cut--;
  return name.substr (0, cut) + "\xe2\x80\xa6"; // "…"
}

// The models folder beside the folder of the binary this code is in
// (build/models for the uninstalled plugin in build/gst and the tools in
// build/tools), where there is one; else "".
static std::string models_beside_binary () {
  static const std::string dir = [] {
    Dl_info info;
    if (!dladdr (reinterpret_cast<void *> (&models_beside_binary), &info) || !info.dli_fname)
      return std::string ();
    std::string bin = info.dli_fname;
    if (bin.find ('/') == std::string::npos) {
      char exe[4096];
      const ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
      if (n <= 0)
        return std::string ();
      bin.assign (exe, static_cast<size_t> (n));
    }
    const size_t slash = bin.rfind ('/');
    const size_t parent = slash == std::string::npos || slash == 0 ? std::string::npos : bin.rfind ('/', slash - 1);
    if (parent == std::string::npos)
      return std::string ();
    const std::string d = bin.substr (0, parent) + "/models";
    char *real = file_kind (d) == FileKind::Directory ? realpath (d.c_str (), nullptr) : nullptr;
    const std::string out = real ? real : "";
    std::free (real);
    return out;
  }();
  return dir;
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
  if (const std::string beside = models_beside_binary (); !beside.empty ())
    dirs.push_back (beside);
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

// Whether a file looks like a cv::dpm model (its short name is "dpm-" and
// its stem): an OpenCV storage whose first element is SBin, as cv::dpm writes.
static bool is_dpm_file (const std::string &path) {
  if (!ends_with (path, ".xml"))
    return false;
  const int fd = open (path.c_str (), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return false;
  char head[512];
  const ssize_t n = read (fd, head, sizeof head);
  close (fd);
  const std::string h (head, n > 0 ? static_cast<size_t> (n) : 0);
  const size_t storage = h.find ("<opencv_storage>");
  return storage != std::string::npos && h.find ("<SBin>", storage) != std::string::npos;
}

// Edit distance (insertions, deletions, substitutions) between a and b.
static size_t edit_distance (const std::string &a, const std::string &b) {
  std::vector<size_t> row (b.size () + 1);
  for (size_t j = 0; j <= b.size (); j++)
    row[j] = j;
  for (size_t i = 1; i <= a.size (); i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size (); j++) {
      const size_t up = row[j];
      row[j] = std::min ({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size ()];
}

std::vector<std::string> similar_models (const std::string &name, size_t max) {
  std::vector<std::pair<size_t, std::string>> scored;
  if (name.size () > 200)
    return {};
  const size_t limit = std::max<size_t> (2, name.size () / 3);
  for (const std::string &m : list_models ()) {
    const size_t d = edit_distance (name, m);
    // a close spelling, or the name is a part of it ("frontalface")
    if (d <= limit || (name.size () >= 4 && m.find (name) != std::string::npos))
      scored.push_back ({d, m});
  }
  std::sort (scored.begin (), scored.end ());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size () && i < max; i++)
    out.push_back (scored[i].second);
  return out;
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
      if (dir == kDpmModelsDir || is_dpm_file (dir + "/" + f))
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

FileKind unresolved_model (const std::string &name, std::string *message) {
  std::vector<std::string> tried;
  resolve_model (name, &tried);
  FileKind kind = name.empty () ? FileKind::Missing : file_kind (name);
  std::string text;
  if (kind == FileKind::TooLong) {
    text = "model name " + quoted (name) + " (" + std::to_string (name.size ()) +
           " bytes) is too long for a file name";
  } else {
    kind = FileKind::Missing;
    for (const std::string &p : tried) {
      const FileKind k = file_kind (p);
      if (k != FileKind::Missing && k != FileKind::TooLong && k != FileKind::Regular) {
        kind = k;
        text = "model " + (p == name ? path_is (p, k) : quoted (name) + ": " + path_is (p, k));
        break;
      }
    }
  }
  if (kind == FileKind::Missing) {
    std::string where;
    for (const std::string &d : model_search_path ())
      where += (where.empty () ? "" : ", ") + name_for_message (d);
    text = "model " + quoted (name) + " not found (searched " + where + ")";
    const std::vector<std::string> near = similar_models (name, 3);
    for (size_t i = 0; i < near.size (); i++)
      text += (i == 0 ? "; did you mean " : i + 1 == near.size () ? " or " : ", ") + near[i];
    text += near.empty () ? "; " : "? ";
    text += "gpudetect-models lists every model it can find";
  }
  if (message)
    *message = text;
  return kind;
}

Error read_model_file (const std::string &path, std::string *out) {
  const std::string name = quoted (path);
  const int fd = open (path.c_str (), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return "cannot open model file " + name + ": " + std::strerror (errno);
  struct stat st;
  if (fstat (fd, &st) != 0) {
    const int err = errno;
    close (fd);
    return "cannot read model file " + name + ": " + std::strerror (err);
  }
  if (!S_ISREG (st.st_mode)) {
    close (fd);
    return "model file " + path_is (path, kind_of_mode (st.st_mode));
  }
  // Up to one byte past the limit, whatever st_size says (a file may grow).
  std::string text;
  text.resize (std::min<size_t> (static_cast<size_t> (std::max<off_t> (st.st_size, 0)), kMaxModelFileBytes) + 1);
  size_t have = 0;
  for (;;) {
    if (have == text.size ()) {
      if (have > kMaxModelFileBytes)
        break;
      text.resize (std::min (text.size () * 2, kMaxModelFileBytes + 1));
    }
    const ssize_t n = read (fd, &text[have], text.size () - have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int err = errno;
      close (fd);
      return "cannot read model file " + name + ": " + std::strerror (err);
    }
    if (n == 0)
      break;
    have += static_cast<size_t> (n);
  }
  close (fd);
  if (have > kMaxModelFileBytes)
    return "model file " + name + " is larger than 64 MiB";
  text.resize (have);
  *out = std::move (text);
  return {};
}

Error in_model_file (const std::string &path, const Error &e) {
  return Error ("model file " + quoted (path) + ": " + e.message, e.kind);
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
