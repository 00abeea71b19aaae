#include "xml.h"

#include "models.h"

#include <libxml/parser.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace gpudetect::xml {

namespace {

struct CtxtFree {
  void operator() (xmlParserCtxt *c) const { xmlFreeParserCtxt (c); }
};

} // namespace

Error parse (const std::string &text, Doc *out) {
  if (text.size () > kMaxModelFileBytes)
    return "model file is larger than 64 MiB";
  if (text.empty ())
    return "model file is empty";
  if (const size_t markup = static_cast<size_t> (std::count (text.begin (), text.end (), '<')); markup > kMaxMarkup)
    return "model file has more than " + std::to_string (kMaxMarkup) + " elements (" + std::to_string (markup) +
           " '<')";
  std::unique_ptr<xmlParserCtxt, CtxtFree> ctxt (xmlNewParserCtxt ());
  if (!ctxt)
    return "out of memory";
  Doc doc (xmlCtxtReadMemory (ctxt.get (), text.data (), static_cast<int> (text.size ()), "model.xml", nullptr,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA |
                                  XML_PARSE_COMPACT));
  if (!doc) {
    const xmlError *e = xmlCtxtGetLastError (ctxt.get ());
    // libxml2's message quotes names from the file: each of its words cut
    // as a quoted value is
    std::string msg;
    for (const std::string &word : split (e && e->message ? e->message : "unknown error"))
      msg += (msg.empty () ? "" : " ") + excerpt (word);
    return "not well-formed XML" + (e ? " (line " + std::to_string (e->line) + "): " + msg : std::string ());
  }
  if (doc->intSubset || doc->extSubset)
    return "document type declarations are not allowed in model files";
  *out = std::move (doc);
  return {};
}

const xmlNode *root (const Doc &doc) { return doc ? xmlDocGetRootElement (doc.get ()) : nullptr; }

bool is_elem (const xmlNode *n, const char *name) {
  return n && n->type == XML_ELEMENT_NODE &&
         (!name || std::strcmp (reinterpret_cast<const char *> (n->name), name) == 0);
}

const xmlNode *child (const xmlNode *n, const char *name) {
  for (const xmlNode *c = n ? n->children : nullptr; c; c = c->next)
    if (is_elem (c, name))
      return c;
  return nullptr;
}

std::vector<const xmlNode *> elements (const xmlNode *n) {
  std::vector<const xmlNode *> v;
  for (const xmlNode *c = n ? n->children : nullptr; c; c = c->next)
    if (is_elem (c))
      v.push_back (c);
  return v;
}

std::string text_of (const xmlNode *n) {
  std::string s;
  for (const xmlNode *c = n ? n->children : nullptr; c; c = c->next)
    if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content)
      s += reinterpret_cast<const char *> (c->content);
  return s;
}

std::vector<std::string> split (const std::string &s, size_t max_tokens) {
  std::vector<std::string> v;
  const char *ws = " \t\n\r\v\f";
  size_t a = s.find_first_not_of (ws);
  while (a != std::string::npos && v.size () < max_tokens) {
    const size_t b = std::min (s.find_first_of (ws, a), s.size ());
    v.push_back (s.substr (a, b - a));
    a = s.find_first_not_of (ws, b);
  }
  return v;
}

std::vector<std::string> tokens (const xmlNode *n, size_t max_tokens) { return split (text_of (n), max_tokens); }

bool attribute (const xmlNode *n, const char *name, std::string *value) {
  if (!n)
    return false;
  for (const xmlAttr *a = n->properties; a; a = a->next) {
    if (std::strcmp (reinterpret_cast<const char *> (a->name), name) != 0)
      continue;
    value->clear ();
    for (const xmlNode *c = a->children; c; c = c->next)
      if (c->type == XML_TEXT_NODE && c->content)
        *value += reinterpret_cast<const char *> (c->content);
    return true;
  }
  return false;
}

} // namespace gpudetect::xml
