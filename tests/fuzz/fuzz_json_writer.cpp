// roijson's JSON writer (gst/jsonwriter.cpp) over any sequence of calls:
// the bytes are read as calls (open or close an object or array, a string,
// a double from 8 raw bytes (NaN, infinities, subnormals included), an
// integer, true, null) with their arguments.  Beyond "no crash": the text is
// strict JSON (RFC 8259's grammar, checked here: no NaN, no "1e+22.0", valid
// UTF-8, no control character unescaped), and json-glib reads back every
// value in order: finite doubles bit for bit (as doubles), non-finite ones
// as null, strings and member names as g_utf8_make_valid gives them.
#include "fuzz.h"

#include "jsonwriter.h"

#include <json-glib/json-glib.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

// A value written, in document order (containers by their kind).
struct Item {
  enum Kind { Object, Array, Key, String, Double, Integer, Bool, Null } kind;
  std::string text; // Key, String: as they should read back
  double d = 0;
  int64_t i = 0;
};

struct Input {
  const uint8_t *p;
  size_t n;
  bool take (void *out, size_t k) {
    if (n < k)
      return false;
    std::memcpy (out, p, k);
    p += k;
    n -= k;
    return true;
  }
  std::string bytes () {
    uint8_t len = 0;
    take (&len, 1);
    const size_t k = std::min<size_t> (len, n);
    std::string s (reinterpret_cast<const char *> (p), k);
    p += k;
    n -= k;
    return s;
  }
};

std::string made_valid (const std::string &s) {
  gchar *v = g_utf8_make_valid (s.data (), static_cast<gssize> (s.size ()));
  std::string r (v);
  g_free (v);
  return r;
}

// RFC 8259's grammar, strictly; `at` moves past the value.
struct Strict {
  const std::string &t;
  size_t at = 0;
  bool ws () {
    while (at < t.size () && (t[at] == ' ' || t[at] == '\t' || t[at] == '\n' || t[at] == '\r'))
      at++;
    return true;
  }
  bool lit (const char *w) {
    const size_t k = std::strlen (w);
    if (t.compare (at, k, w) != 0)
      return false;
    at += k;
    return true;
  }
  bool digits () {
    const size_t s = at;
    while (at < t.size () && t[at] >= '0' && t[at] <= '9')
      at++;
    return at > s;
  }
  bool number () {
    if (at < t.size () && t[at] == '-')
      at++;
    if (at < t.size () && t[at] == '0')
      at++;
    else if (!(at < t.size () && t[at] >= '1' && t[at] <= '9' && digits ()))
      return false;
    if (at < t.size () && t[at] == '.' && (++at, !digits ()))
      return false;
    if (at < t.size () && (t[at] == 'e' || t[at] == 'E')) {
      at++;
      if (at < t.size () && (t[at] == '+' || t[at] == '-'))
        at++;
      if (!digits ())
        return false;
    }
    return true;
  }
  bool string () {
    if (!lit ("\""))
      return false;
    const size_t start = at;
    while (at < t.size () && t[at] != '"') {
      const unsigned char c = static_cast<unsigned char> (t[at]);
      if (c < 0x20)
        return false;
      if (c == '\\') {
        at++;
        if (at >= t.size ())
          return false;
        if (t[at] == 'u') {
          for (int k = 1; k <= 4; k++)
            if (at + k >= t.size () || !g_ascii_isxdigit (t[at + k]))
              return false;
          at += 4;
        } else if (!std::strchr ("\"\\/bfnrt", t[at])) {
          return false;
        }
      }
      at++;
    }
    return g_utf8_validate_len (t.data () + start, at - start, nullptr) && lit ("\"");
  }
  bool value (int depth) {
    if (depth > 200)
      return false;
    ws ();
    if (at >= t.size ())
      return false;
    bool ok;
    switch (t[at]) {
    case '{':
      at++, ws ();
      if (lit ("}"))
        return ws ();
      do {
        ws ();
        ok = string () && ws () && lit (":") && value (depth + 1);
      } while (ok && lit (","));
      return ok && lit ("}") && ws ();
    case '[':
      at++, ws ();
      if (lit ("]"))
        return ws ();
      do
        ok = value (depth + 1);
      while (ok && lit (","));
      return ok && lit ("]") && ws ();
    case '"': return string () && ws ();
    case 't': return lit ("true") && ws ();
    case 'f': return lit ("false") && ws ();
    case 'n': return lit ("null") && ws ();
    default: return number () && ws ();
    }
  }
};

// The parsed node against the items written, in order.
void expect (JsonNode *node, const std::vector<Item> &items, size_t *k) {
  FUZZ_CHECK (*k < items.size (), "more values read than written");
  const Item &it = items[(*k)++];
  switch (it.kind) {
  case Item::Object: {
    FUZZ_CHECK (JSON_NODE_HOLDS_OBJECT (node), "item %zu: not an object", *k);
    JsonObject *o = json_node_get_object (node);
    GList *members = json_object_get_members (o);
    for (GList *m = members; m; m = m->next) {
      FUZZ_CHECK (*k < items.size () && items[*k].kind == Item::Key, "item %zu: a member not written", *k);
      FUZZ_CHECK (items[*k].text == static_cast<const char *> (m->data), "member name '%s'",
                  static_cast<const char *> (m->data));
      (*k)++;
      expect (json_object_get_member (o, static_cast<const char *> (m->data)), items, k);
    }
    g_list_free (members);
    break;
  }
  case Item::Array: {
    FUZZ_CHECK (JSON_NODE_HOLDS_ARRAY (node), "item %zu: not an array", *k);
    JsonArray *a = json_node_get_array (node);
    for (guint i = 0; i < json_array_get_length (a); i++)
      expect (json_array_get_element (a, i), items, k);
    break;
  }
  case Item::String:
    FUZZ_CHECK (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING &&
                    it.text == json_node_get_string (node),
                "item %zu: string", *k);
    break;
  case Item::Double:
    if (!std::isfinite (it.d)) {
      FUZZ_CHECK (JSON_NODE_HOLDS_NULL (node), "item %zu: %g not null", *k, it.d);
    } else {
      FUZZ_CHECK (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_DOUBLE,
                  "item %zu: %.17g not read as a double", *k, it.d);
      const double back = json_node_get_double (node);
      FUZZ_CHECK (std::memcmp (&back, &it.d, sizeof back) == 0 || (back == 0 && it.d == 0),
                  "item %zu: %.17g read back as %.17g", *k, it.d, back);
    }
    break;
  case Item::Integer:
    FUZZ_CHECK (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64 &&
                    json_node_get_int (node) == it.i,
                "item %zu: integer", *k);
    break;
  case Item::Bool:
    FUZZ_CHECK (JSON_NODE_HOLDS_VALUE (node) && json_node_get_boolean (node), "item %zu: true", *k);
    break;
  case Item::Null: FUZZ_CHECK (JSON_NODE_HOLDS_NULL (node), "item %zu: null", *k); break;
  case Item::Key: FUZZ_CHECK (false, "item %zu: a member name where a value was read", *k); break;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) {
  Input in{data, size};
  JsonWriter w;
  std::vector<Item> items;
  std::vector<bool> open; // per open container: is an object
  int keys = 0;
  bool top_written = false;
  uint8_t op;
  while (in.take (&op, 1)) {
    if (open.empty () && top_written)
      break; // one JSON text
    const int what = op % 9;
    if (what == 1) { // close the innermost container
      if (open.empty ())
        continue;
      open.back () ? w.end_object () : w.end_array ();
      open.pop_back ();
      continue;
    }
    // a value: in an object, after a member name (unique: json-glib keeps one of equal names)
    if (!open.empty () && open.back ()) {
      std::string name = std::to_string (keys++) + ":" + in.bytes ();
      w.key (name);
      items.push_back ({Item::Key, made_valid (name)});
    }
    top_written = true;
    switch (what) {
    case 0:
    case 2:
      if (open.size () >= 64) {
        w.null ();
        items.push_back ({Item::Null});
        break;
      }
      what == 0 ? w.begin_object () : w.begin_array ();
      items.push_back ({what == 0 ? Item::Object : Item::Array});
      open.push_back (what == 0);
      break;
    case 3:
    case 4: {
      const std::string s = in.bytes ();
      w.string (s);
      items.push_back ({Item::String, made_valid (s)});
      break;
    }
    case 5:
    case 6: {
      double d = 0;
      in.take (&d, sizeof d);
      w.number (d);
      Item it{Item::Double};
      it.d = d;
      items.push_back (it);
      break;
    }
    case 7: {
      int64_t i = 0;
      in.take (&i, sizeof i);
      w.integer (i);
      Item it{Item::Integer};
      it.i = i;
      items.push_back (it);
      break;
    }
    case 8:
      w.boolean (true);
      items.push_back ({Item::Bool});
      break;
    }
  }
  while (!open.empty ()) {
    open.back () ? w.end_object () : w.end_array ();
    open.pop_back ();
  }
  if (!top_written) {
    w.null ();
    items.push_back ({Item::Null});
  }
  const std::string &text = w.text ();
  Strict strict{text};
  FUZZ_CHECK (strict.value (0) && strict.at == text.size (), "not strict JSON at byte %zu: %.200s", strict.at,
              text.c_str ());

  JsonParser *parser = json_parser_new ();
  GError *error = nullptr;
  FUZZ_CHECK (json_parser_load_from_data (parser, text.data (), static_cast<gssize> (text.size ()), &error),
              "json-glib: %s: %.200s", error ? error->message : "", text.c_str ());
  size_t k = 0;
  expect (json_parser_get_root (parser), items, &k);
  FUZZ_CHECK (k == items.size (), "%zu values written, %zu read", items.size (), k);
  g_object_unref (parser);
  return 0;
}
