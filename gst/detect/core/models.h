// Model files: where they are looked up, how names map to files, how they
// are read (bounded; a text format line by line) and loaded into a family's
// model, and the default label a file's name suggests.  Which family reads a
// file is decided by its content (families/registry.h).
#pragma once

#include "cl/error.h"
#include <cstddef>
#include <string>
#include <vector>

namespace gpudetect {

// No model file is read past this size.
constexpr size_t kMaxModelFileBytes = 64u << 20;

// Directories searched for models named without a path, in order:
// $GPUDETECT_MODEL_PATH (colon separated), the "models" folder beside the
// folder of the binary the engine is in (build/models for the uninstalled
// plugin and tools) where it exists, the project's installed models
// directory, /usr/share/opencv4/{haar,lbp}cascades, /usr/share/opencv/...,
// /usr/share/doc/opencv-doc/examples/dpm/data (cv::dpm's models)
std::vector<std::string> model_search_path ();

// Resolves a model name to a file: an existing regular file is taken as is; a short
// name such as "lbp-frontalface-improved" or "haar-frontalface-default" maps
// to lbpcascade_frontalface_improved.xml / haarcascade_frontalface_default.xml,
// "dpm-inriaperson" to inriaperson.xml,
// and a bare name (with or without ".xml" or ".forest") is looked up in
// model_search_path().  Returns an empty string when nothing matches; `tried`
// lists the candidates.  Never opens a file.
std::string resolve_model (const std::string &name, std::vector<std::string> *tried = nullptr);

// What is at a path, as stat() (following links) finds it.  Only a regular
// file is read as a model.
enum class FileKind { Regular, Missing, TooLong, Directory, Fifo, CharDevice, BlockDevice, Socket, Other };
FileKind file_kind (const std::string &path);

// Why `name` resolves to no model file (resolve_model returned ""): TooLong
// where the name is longer than a path can be, else the kind of the first
// candidate that exists but is not a regular file, else Missing.  `message`
// (where given) says so for people: "model 'NAME' is a FIFO, not a regular
// file", "model 'NAME' not found (searched DIRS)", ...
FileKind unresolved_model (const std::string &name, std::string *message = nullptr);

// A name or path as messages quote it: at most `max_bytes` bytes of it (cut
// at a UTF-8 character boundary), then "…" where it was cut.
std::string name_for_message (const std::string &name, size_t max_bytes = 200);

// The short names of every model found on the search path: OpenCV's cascades
// by their short names, cv::dpm's files as dpm- and their stem, other model
// files by their stems.
std::vector<std::string> list_models ();

// Up to `max` names of list_models () closest to `name` (by edit distance,
// or containing it), closest first: the "did you mean" of a name not found.
std::vector<std::string> similar_models (const std::string &name, size_t max);

// A label for a model file: "face", "eye", "person", ... or the file's stem.
std::string label_for_model (const std::string &path);

// Reads a whole model file (at most kMaxModelFileBytes).  Only a regular
// file is read: the file is opened without blocking (O_NONBLOCK: a FIFO
// never waits for a writer) and refused, saying what it is, unless fstat()
// finds a regular file; the read stops past the size limit whatever the
// file's size says.  Returns an empty string on success, else a message
// naming the file.
Error read_model_file (const std::string &path, std::string *out);

// A message about what the model file at `path` holds, naming the file:
// "model file 'PATH': MESSAGE".
Error in_model_file (const std::string &path, const Error &e);

// Names a model after the file it was read from: `path` and the file's label
// (label_for_model).
template <typename Model> void name_after_file (const std::string &path, Model *m) {
  m->path = path;
  m->default_label = label_for_model (path);
}

// Reads the model file at `path` (read_model_file) and parses its text with
// `parse`, whose message is then said of the file (in_model_file); on
// success the model is named after the file.
template <typename Model>
Error load_model_file (const std::string &path, Error (*parse) (const std::string &, Model *), Model *out) {
  std::string text;
  if (Error e = read_model_file (path, &text))
    return e;
  if (Error e = parse (text, out))
    return in_model_file (path, e);
  name_after_file (path, out);
  return {};
}

// Lines of a text model file, numbered from 1, without their line break;
// blank lines and comments (# first) skipped.  Spaces, tabs and carriage
// returns are blanks, so that a CRLF file reads as an LF one.
class ModelLines {
public:
  explicit ModelLines (const std::string &text) : text_ (text) {}
  // The next line that is neither blank nor a comment, as it stands in the
  // file (its blanks kept, so that columns count from its first byte);
  // false at the end.
  bool next (std::string *line);
  // The number of the line `next` gave last (that of the file's last line
  // once it is at the end).
  size_t number () const { return number_; }

private:
  const std::string &text_;
  size_t at_ = 0, number_ = 0;
};

// Whether a byte is a blank of a text model file: space, tab or carriage return.
inline bool is_model_blank (char c) { return c == ' ' || c == '\t' || c == '\r'; }

} // namespace gpudetect
