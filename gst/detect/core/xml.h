// Safe reading of XML model files with libxml2, shared by every family's
// loader: no network or DTD access, document type declarations refused,
// entity references never expanded, bounded sizes, numbers parsed strictly.
#pragma once

#include "cl/error.h"
#include "numbers.h"

#include <libxml/tree.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpudetect::xml {

// At most this many markup starts ('<': elements, end tags, comments, ...) in
// a document, so that its tree stays under 300 MiB whatever the file holds (a
// file of "<_/>" is 30 times its size as a tree, and 64 MiB are allowed): 8
// times OpenCV's largest cascade (haarcascade_frontalface_alt_tree.xml,
// 122046).
constexpr size_t kMaxMarkup = 1u << 20;

struct DocFree {
  void operator() (xmlDoc *d) const { xmlFreeDoc (d); }
};
using Doc = std::unique_ptr<xmlDoc, DocFree>;

// Parses a whole document from memory (at most the model-file limit of
// core/models.h, at most kMaxMarkup markup starts).  Returns an empty string on success, else a message naming
// the line and libxml2's reason.
Error parse (const std::string &text, Doc *out);

// The document's root element (null if none).
const xmlNode *root (const Doc &doc);

// A model from a document's text: parses it (parse) and reads its root
// element with `read`.
template <typename Model>
Error read_document (const std::string &text, Error (*read) (const xmlNode *, Model *), Model *out) {
  Doc doc;
  if (Error e = parse (text, &doc))
    return e;
  return read (root (doc), out);
}

bool is_elem (const xmlNode *n, const char *name = nullptr);
// The first child element called `name`, or null.
const xmlNode *child (const xmlNode *n, const char *name);
// Every child element, in document order.
std::vector<const xmlNode *> elements (const xmlNode *n);
// Text and CDATA content of an element (entity references never expanded).
std::string text_of (const xmlNode *n);
// Whitespace-separated tokens of a string, or of an element's text: at most
// `max_tokens` of them (a caller that expects N passes N + 1 to see that there
// are more, without holding every token of a hostile file).
std::vector<std::string> split (const std::string &s, size_t max_tokens = SIZE_MAX);
std::vector<std::string> tokens (const xmlNode *n, size_t max_tokens = SIZE_MAX);
// An attribute's value; false when the element has no such attribute.
bool attribute (const xmlNode *n, const char *name, std::string *value);

// Strict conversions and excerpts for messages (numbers.h), as every parser
// reads them.
using ::gpudetect::excerpt;
using ::gpudetect::to_double;
using ::gpudetect::to_long;

} // namespace gpudetect::xml
