// Safe reading of XML model files with libxml2, shared by every family's
// loader: no network or DTD access, document type declarations refused,
// entity references never expanded, bounded sizes, numbers parsed strictly.
#pragma once

#include <libxml/tree.h>

#include <memory>
#include <string>
#include <vector>

namespace gpudetect::xml {

struct DocFree {
  void operator() (xmlDoc *d) const { xmlFreeDoc (d); }
};
using Doc = std::unique_ptr<xmlDoc, DocFree>;

// Parses a whole document from memory (at most the model-file limit of
// core/models.h).  Returns an empty string on success, else a message naming
// the line and libxml2's reason.
std::string parse (const std::string &text, Doc *out);

// The document's root element (null if none).
const xmlNode *root (const Doc &doc);

bool is_elem (const xmlNode *n, const char *name = nullptr);
// The first child element called `name`, or null.
const xmlNode *child (const xmlNode *n, const char *name);
// Every child element, in document order.
std::vector<const xmlNode *> elements (const xmlNode *n);
// Text and CDATA content of an element (entity references never expanded).
std::string text_of (const xmlNode *n);
// Whitespace-separated tokens of a string, or of an element's text.
std::vector<std::string> split (const std::string &s);
std::vector<std::string> tokens (const xmlNode *n);
// An attribute's value; false when the element has no such attribute.
bool attribute (const xmlNode *n, const char *name, std::string *value);

// Strict conversions: the whole token, finite values, no overflow.
bool to_double (const std::string &t, double *v);
bool to_long (const std::string &t, long long *v);

} // namespace gpudetect::xml
