#include "config.h"

#include "properties.h"

#include <vector>

namespace {
struct Property {
  GpuDetectPropertySet set;
  GpuDetectPropertyGet get;
};

// A class's table, kept on its GType (classes of the plugin's elements are
// never finalized).
struct Table {
  std::vector<Property> properties;
};

GQuark table_quark ()
{
  static GQuark q = g_quark_from_static_string ("gpudetect-property-table");
  return q;
}

// The property's entry in the table of the class that installed it.
const Property *find (guint prop_id, GParamSpec *pspec)
{
  const Table *t = static_cast<const Table *> (g_type_get_qdata (pspec->owner_type, table_quark ()));
  if (!t || prop_id == 0 || prop_id > t->properties.size ())
    return nullptr;
  return &t->properties[prop_id - 1];
}

void set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  const Property *p = find (prop_id, pspec);
  if (p && p->set)
    p->set (object, value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

void get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  const Property *p = find (prop_id, pspec);
  if (p)
    p->get (object, value, pspec);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}
} // namespace

void gpudetect_property_install (GObjectClass *klass, GParamSpec *pspec, GpuDetectPropertySet set,
                                 GpuDetectPropertyGet get)
{
  const GType type = G_OBJECT_CLASS_TYPE (klass);
  Table *t = static_cast<Table *> (g_type_get_qdata (type, table_quark ()));
  if (!t) {
    t = new Table;
    g_type_set_qdata (type, table_quark (), t);
    klass->set_property = set_property;
    klass->get_property = get_property;
  }
  t->properties.push_back ({std::move (set), std::move (get)});
  g_object_class_install_property (klass, static_cast<guint> (t->properties.size ()), pspec);
}

GType gpudetect_enum_register (gsize *type, const char *name, const GEnumValue *values)
{
  if (g_once_init_enter (type))
    g_once_init_leave (type, g_enum_register_static (name, values));
  return *type;
}

void gpudetect_value_get (const GValue *value, bool *out) { *out = g_value_get_boolean (value); }
void gpudetect_value_get (const GValue *value, int *out) { *out = g_value_get_int (value); }
void gpudetect_value_get (const GValue *value, guint *out) { *out = g_value_get_uint (value); }
void gpudetect_value_get (const GValue *value, guint64 *out) { *out = g_value_get_uint64 (value); }
void gpudetect_value_get (const GValue *value, double *out) { *out = g_value_get_double (value); }
void gpudetect_value_get (const GValue *value, std::string *out)
{
  const gchar *s = g_value_get_string (value);
  *out = s ? s : "";
}

void gpudetect_value_set (GValue *value, GParamSpec *, bool v) { g_value_set_boolean (value, v); }
void gpudetect_value_set (GValue *value, GParamSpec *, int v) { g_value_set_int (value, v); }
void gpudetect_value_set (GValue *value, GParamSpec *, guint v) { g_value_set_uint (value, v); }
void gpudetect_value_set (GValue *value, GParamSpec *, guint64 v) { g_value_set_uint64 (value, v); }
void gpudetect_value_set (GValue *value, GParamSpec *, double v) { g_value_set_double (value, v); }
void gpudetect_value_set (GValue *value, GParamSpec *pspec, const std::string &v)
{
  // unset reads back as the default: NULL where that is NULL
  const bool unset_is_null = !G_PARAM_SPEC_STRING (pspec)->default_value;
  g_value_set_string (value, v.empty () && unset_is_null ? nullptr : v.c_str ());
}
