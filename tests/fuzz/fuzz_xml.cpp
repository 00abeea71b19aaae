// The safe XML reader (core/xml.cpp) over any bytes, walked as the loaders
// walk a document.  Beyond "no crash": a document that parses has no
// document type declaration, a refusal says why, and the strict number
// conversions accept only what they give back (to_long of a value's decimal
// text is the value; to_double is finite).
#include "fuzz.h"

#include "core/xml.h"

#include <cmath>
#include <vector>

using namespace gpudetect;

static void check_token (const std::string &t) {
  long long v;
  if (xml::to_long (t, &v)) {
    long long w;
    FUZZ_CHECK (xml::to_long (std::to_string (v), &w) && w == v, "to_long('%s') = %lld does not read back",
                t.c_str (), v);
  }
  double d;
  if (xml::to_double (t, &d))
    FUZZ_CHECK (std::isfinite (d), "to_double('%s') is not finite", t.c_str ());
}

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  xml::Doc doc;
  const std::string err = xml::parse (fuzz_text (data, size), &doc).message;
  if (!err.empty ()) {
    FUZZ_CHECK (!doc, "a refused document was kept: %s", err.c_str ());
    return 0;
  }
  FUZZ_CHECK (doc && !doc->intSubset && !doc->extSubset, "a document type declaration got through");
  // Every element, depth first, without recursion.
  std::vector<const xmlNode *> todo;
  if (const xmlNode *r = xml::root (doc))
    todo.push_back (r);
  size_t visited = 0;
  while (!todo.empty ()) {
    const xmlNode *n = todo.back ();
    todo.pop_back ();
    FUZZ_CHECK (xml::is_elem (n), "a non-element among elements");
    visited++;
    for (const std::string &t : xml::tokens (n))
      check_token (t);
    for (const xmlAttr *a = n->properties; a; a = a->next) {
      std::string v;
      FUZZ_CHECK (xml::attribute (n, reinterpret_cast<const char *> (a->name), &v), "attribute lost");
      for (const std::string &t : xml::split (v))
        check_token (t);
    }
    for (const xmlNode *c : xml::elements (n)) {
      FUZZ_CHECK (xml::child (n, reinterpret_cast<const char *> (c->name)), "child lookup");
      todo.push_back (c);
    }
  }
  FUZZ_CHECK (visited <= size, "%zu elements from %zu bytes", visited, size);
  return 0;
}
