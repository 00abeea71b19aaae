// The properties of the plugin's elements as one table per class, in place
// of a set_property/get_property switch per element: each property is its
// GParamSpec and the field of the element's settings it sets and reads, under
// the settings' lock (GpuDetectSettings), with an optional function run after
// a set (still under the lock: a consequence such as "search changed");
// a read-only property is its GParamSpec and the function that reads it
// (also under the lock).  Ids follow the order of installation, from 1; the
// class's set_property and get_property become the table's.
//
// Field types and the GValue each is: bool (boolean), int, guint, guint64,
// double, an enum type (enum), std::string (string: NULL reads back as "",
// and "" as NULL where the property's default is NULL).  A field whose type
// is not its GParamSpec's aborts class_init.
#pragma once

#include <gst/gst.h>

#include <functional>
#include <mutex>
#include <string>
#include <type_traits>

// Property flags: settable up to READY, settable while PLAYING, read-only.
#define GPUDETECT_PARAM_READY \
  static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)
#define GPUDETECT_PARAM_PLAYING \
  static_cast<GParamFlags> (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)
#define GPUDETECT_PARAM_READ_ONLY static_cast<GParamFlags> (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)

// An element's settings and the lock that guards them: properties are set
// from any thread; the streaming thread reads a copy.
template <typename S> struct GpuDetectSettings {
  std::mutex lock;
  S values;
  S copy ()
  {
    std::lock_guard<std::mutex> g (lock);
    return values;
  }
};

// GValue <-> field, for the types above.
void gpudetect_value_get (const GValue *value, bool *out);
void gpudetect_value_get (const GValue *value, int *out);
void gpudetect_value_get (const GValue *value, guint *out);
void gpudetect_value_get (const GValue *value, guint64 *out);
void gpudetect_value_get (const GValue *value, double *out);
void gpudetect_value_get (const GValue *value, std::string *out);
template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
void gpudetect_value_get (const GValue *value, E *out)
{
  *out = static_cast<E> (g_value_get_enum (value));
}
void gpudetect_value_set (GValue *value, GParamSpec *pspec, bool v);
void gpudetect_value_set (GValue *value, GParamSpec *pspec, int v);
void gpudetect_value_set (GValue *value, GParamSpec *pspec, guint v);
void gpudetect_value_set (GValue *value, GParamSpec *pspec, guint64 v);
void gpudetect_value_set (GValue *value, GParamSpec *pspec, double v);
void gpudetect_value_set (GValue *value, GParamSpec *pspec, const std::string &v);
template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
void gpudetect_value_set (GValue *value, GParamSpec *, E v)
{
  g_value_set_enum (value, v);
}

// The fundamental GType of a field's property.
template <typename T> constexpr GType gpudetect_value_fundamental ()
{
  if constexpr (std::is_enum_v<T>)
    return G_TYPE_ENUM;
  else if constexpr (std::is_same_v<T, bool>)
    return G_TYPE_BOOLEAN;
  else if constexpr (std::is_same_v<T, int>)
    return G_TYPE_INT;
  else if constexpr (std::is_same_v<T, guint>)
    return G_TYPE_UINT;
  else if constexpr (std::is_same_v<T, guint64>)
    return G_TYPE_UINT64;
  else if constexpr (std::is_same_v<T, double>)
    return G_TYPE_DOUBLE;
  else {
    static_assert (std::is_same_v<T, std::string>, "no property type for this field");
    return G_TYPE_STRING;
  }
}

// An enum type's GType, registered once from `values` (ending in a zeroed
// entry) as `name`: the body of its _get_type (), `type` its static.
GType gpudetect_enum_register (gsize *type, const char *name, const GEnumValue *values);

using GpuDetectPropertySet = std::function<void (GObject *object, const GValue *value)>;
using GpuDetectPropertyGet = std::function<void (GObject *object, GValue *value, GParamSpec *pspec)>;

// Installs `pspec` on `klass` with the next id, set (null: read-only) and
// read by the given functions; the first call makes the class's
// set_property and get_property the table's.
void gpudetect_property_install (GObjectClass *klass, GParamSpec *pspec, GpuDetectPropertySet set,
                                 GpuDetectPropertyGet get);

// The table of one class whose instances hold GpuDetectSettings<S>, found by
// `settings` (in class_init: GpuDetectProperties<Settings> props (klass,
// settings_of); props.field (g_param_spec_int (...), &Settings::x); ...).
template <typename S> class GpuDetectProperties {
public:
  using SettingsOf = GpuDetectSettings<S> &(*) (GObject *object);
  using Changed = void (*) (GObject *object, S &settings);
  using Read = void (*) (GObject *object, GValue *value);

  GpuDetectProperties (GObjectClass *klass, SettingsOf settings) : klass_ (klass), settings_ (settings) {}

  // A property that is `field` of the settings; `changed` runs after it is set.
  template <typename T> void field (GParamSpec *pspec, T S::*field, Changed changed = nullptr)
  {
    g_assert (G_TYPE_FUNDAMENTAL (G_PARAM_SPEC_VALUE_TYPE (pspec)) == gpudetect_value_fundamental<T> ());
    const SettingsOf of = settings_;
    gpudetect_property_install (
        klass_, pspec,
        [of, field, changed] (GObject *object, const GValue *value) {
          GpuDetectSettings<S> &s = of (object);
          std::lock_guard<std::mutex> g (s.lock);
          gpudetect_value_get (value, &(s.values.*field));
          if (changed)
            changed (object, s.values);
        },
        [of, field] (GObject *object, GValue *value, GParamSpec *spec) {
          GpuDetectSettings<S> &s = of (object);
          std::lock_guard<std::mutex> g (s.lock);
          gpudetect_value_set (value, spec, s.values.*field);
        });
  }

  // A read-only property that `read` reads.
  void read_only (GParamSpec *pspec, Read read)
  {
    const SettingsOf of = settings_;
    gpudetect_property_install (klass_, pspec, nullptr, [of, read] (GObject *object, GValue *value, GParamSpec *) {
      GpuDetectSettings<S> &s = of (object);
      std::lock_guard<std::mutex> g (s.lock);
      read (object, value);
    });
  }

private:
  GObjectClass *klass_;
  SettingsOf settings_;
};
