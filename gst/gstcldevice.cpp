#include "gstcldevice.h"

#include <vector>

GST_DEBUG_CATEGORY_STATIC (gst_gpu_detect_cl_device_debug);
#define GST_CAT_DEFAULT gst_gpu_detect_cl_device_debug

namespace {
struct Boxed {
  GpuDetectSharedDevice device;
};
gpointer boxed_copy (gpointer p) { return new Boxed (*static_cast<Boxed *> (p)); }
void boxed_free (gpointer p) { delete static_cast<Boxed *> (p); }
} // namespace

GType gst_gpu_detect_cl_device_get_type (void)
{
  static GType type = 0;
  if (g_once_init_enter (&type)) {
    GType t = g_boxed_type_register_static ("GstGpuDetectClDevice", boxed_copy, boxed_free);
    GST_DEBUG_CATEGORY_INIT (gst_gpu_detect_cl_device_debug, "gpudetectcontext", 0, "shared OpenCL device");
    g_once_init_leave (&type, t);
  }
  return type;
}

GstContext *gpudetect_cl_context_new (const GpuDetectSharedDevice &device)
{
  GstContext *context = gst_context_new (GPUDETECT_CL_CONTEXT_TYPE, TRUE);
  GstStructure *s = gst_context_writable_structure (context);
  Boxed b{device};
  gst_structure_set (s, "device", gst_gpu_detect_cl_device_get_type (), &b, "name", G_TYPE_STRING,
                     device ? device->info.describe ().c_str () : "", nullptr);
  return context;
}

GpuDetectSharedDevice gpudetect_cl_context_get_device (GstContext *context)
{
  if (!context || g_strcmp0 (gst_context_get_context_type (context), GPUDETECT_CL_CONTEXT_TYPE) != 0)
    return {};
  const GstStructure *s = gst_context_get_structure (context);
  const GValue *v = gst_structure_get_value (s, "device");
  if (!v || !G_VALUE_HOLDS (v, gst_gpu_detect_cl_device_get_type ()))
    return {};
  const Boxed *b = static_cast<const Boxed *> (g_value_get_boxed (v));
  return b ? b->device : GpuDetectSharedDevice ();
}

void GpuDetectDeviceSlot::set_context (GstContext *context)
{
  if (GpuDetectSharedDevice d = gpudetect_cl_context_get_device (context)) {
    std::lock_guard<std::mutex> g (lock);
    device = std::move (d);
  }
}

GpuDetectSharedDevice GpuDetectDeviceSlot::get ()
{
  std::lock_guard<std::mutex> g (lock);
  return device;
}

struct QueryData {
  GstQuery *query;
  bool answered = false;
};

static gboolean query_peer (GstElement *, GstPad *pad, gpointer user_data)
{
  QueryData *d = static_cast<QueryData *> (user_data);
  if (gst_pad_peer_query (pad, d->query)) {
    GstContext *c = nullptr;
    gst_query_parse_context (d->query, &c);
    d->answered = c != nullptr;
  }
  return !d->answered; // on to the next pad until one answers
}

// Every device an element of this process opened and some element still
// holds, so that pipelines that do not see each other's contexts (separate
// pipelines of one application) still share one context, one program cache
// and one set of programs per device, as elements in one pipeline do.
static std::mutex process_lock;
static std::vector<std::weak_ptr<gpudetect::cl::Device>> process_devices;

static GpuDetectSharedDevice process_device (const gpudetect::cl::DeviceInfo &want, const std::string &selector,
                                             std::string *error)
{
  std::lock_guard<std::mutex> g (process_lock);
  GpuDetectSharedDevice found;
  for (auto it = process_devices.begin (); it != process_devices.end ();) {
    GpuDetectSharedDevice d = it->lock ();
    if (!d) {
      it = process_devices.erase (it);
      continue;
    }
    if (!found && d->info.id == want.id)
      found = std::move (d);
    ++it;
  }
  if (found)
    return found;
  auto d = std::make_shared<gpudetect::cl::Device> ();
  if (gpudetect::Error e = gpudetect::cl::open_device (selector, false, d.get ())) {
    *error = e.message;
    return {};
  }
  process_devices.push_back (d);
  return d;
}

bool gpudetect_cl_device_ensure (GstElement *element, const std::string &selector, GpuDetectDeviceSlot *slot,
                                 GpuDetectSharedDevice *out, std::string *error)
{
  gst_gpu_detect_cl_device_get_type (); // our debug category, before the first log
  gpudetect::cl::DeviceInfo want;
  if (gpudetect::Error e = gpudetect::cl::choose_device (selector, &want)) {
    *error = e.message;
    return false;
  }
  auto usable = [&] (const GpuDetectSharedDevice &d) { return d && d->info.id == want.id; };
  if (GpuDetectSharedDevice d = slot->get (); usable (d)) {
    *out = d;
    return true;
  }
  // 1. a peer's, downstream then upstream
  QueryData q{gst_query_new_context (GPUDETECT_CL_CONTEXT_TYPE)};
  gst_element_foreach_src_pad (element, query_peer, &q);
  if (!q.answered)
    gst_element_foreach_sink_pad (element, query_peer, &q);
  if (q.answered) {
    GstContext *c = nullptr;
    gst_query_parse_context (q.query, &c);
    if (usable (gpudetect_cl_context_get_device (c))) {
      GST_DEBUG_OBJECT (element, "OpenCL device shared by a peer");
      gst_element_set_context (element, c);
    }
  }
  gst_query_unref (q.query);
  if (GpuDetectSharedDevice d = slot->get (); usable (d)) {
    *out = d;
    return true;
  }
  // 2. the application's or a bin's (answered by set_context, synchronously)
  gst_element_post_message (element, gst_message_new_need_context (GST_OBJECT (element), GPUDETECT_CL_CONTEXT_TYPE));
  if (GpuDetectSharedDevice d = slot->get (); usable (d)) {
    GST_DEBUG_OBJECT (element, "OpenCL device shared by the application or a bin");
    *out = d;
    return true;
  }
  // 3. the one another pipeline of this process opened on this device, else
  // a new one; announced
  GpuDetectSharedDevice d = process_device (want, selector, error);
  if (!d)
    return false;
  GST_DEBUG_OBJECT (element, "shared OpenCL device %s", d->info.describe ().c_str ());
  GstContext *c = gpudetect_cl_context_new (d);
  gst_element_set_context (element, c);
  gst_element_post_message (element, gst_message_new_have_context (GST_OBJECT (element), c));
  *out = slot->get ();
  if (!usable (*out)) // set_context did not keep it (a subclass that chains oddly): use ours all the same
    *out = d;
  return true;
}

bool gpudetect_cl_device_handle_query (GstElement *element, GstQuery *query, GpuDetectDeviceSlot *slot)
{
  const gchar *type = nullptr;
  if (GST_QUERY_TYPE (query) != GST_QUERY_CONTEXT || !gst_query_parse_context_type (query, &type) ||
      g_strcmp0 (type, GPUDETECT_CL_CONTEXT_TYPE) != 0)
    return false;
  GpuDetectSharedDevice d = slot->get ();
  if (!d)
    return false;
  GstContext *c = gpudetect_cl_context_new (d);
  gst_query_set_context (query, c);
  gst_context_unref (c);
  GST_DEBUG_OBJECT (element, "answered a context query with %s", d->info.describe ().c_str ());
  return true;
}
