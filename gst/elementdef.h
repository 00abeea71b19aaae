#pragma once

#include "gpudetect-elements.h"
#include "properties.h"

#include <gst/gst.h>

// Defines struct _TypeName {parent; priv}, parent_class, the type, its registration and a finalize that deletes priv.
#define GPUDETECT_DEFINE_ELEMENT(TypeName, type_name, ParentName, PARENT_TYPE, element)             \
  struct _##TypeName {                                                                              \
    ParentName parent;                                                                              \
    TypeName##Private *priv;                                                                        \
  };                                                                                                \
  G_DEFINE_TYPE (TypeName, type_name, PARENT_TYPE)                                                  \
  static gpointer &parent_class = type_name##_parent_class;                                         \
  GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (element, #element, GST_RANK_NONE, type_name##_get_type (), \
                                         gpudetect_element_init (plugin))                           \
  static void type_name##_finalize (GObject *object)                                                \
  {                                                                                                 \
    delete G_TYPE_CHECK_INSTANCE_CAST (object, type_name##_get_type (), TypeName)->priv;            \
    G_OBJECT_CLASS (parent_class)->finalize (object);                                               \
  }

// class_init's opening: sets the class's finalize and returns its property table over the instances' settings.
template <typename S>
GpuDetectProperties<S> gpudetect_element_class_init (gpointer klass, GObjectFinalizeFunc finalize,
                                                     GpuDetectSettings<S> &(*settings_of) (GObject *object))
{
  G_OBJECT_CLASS (klass)->finalize = finalize;
  return GpuDetectProperties<S> (G_OBJECT_CLASS (klass), settings_of);
}
