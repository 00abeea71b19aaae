#include "gstdeviceframe.h"

#include <gst/video/gstvideometa.h>

namespace {

gboolean meta_init (GstMeta *meta, gpointer, GstBuffer *)
{
  reinterpret_cast<GstGpuDetectFrameMeta *> (meta)->frame = nullptr;
  return TRUE;
}

void meta_free (GstMeta *meta, GstBuffer *)
{
  auto *m = reinterpret_cast<GstGpuDetectFrameMeta *> (meta);
  delete m->frame;
  m->frame = nullptr;
}

// Copies only: a region of the buffer is not the frame any more.
gboolean meta_transform (GstBuffer *dest, GstMeta *meta, GstBuffer *, GQuark type, gpointer data)
{
  auto *m = reinterpret_cast<GstGpuDetectFrameMeta *> (meta);
  if (!GST_META_TRANSFORM_IS_COPY (type) || !m->frame)
    return FALSE;
  const GstMetaTransformCopy *copy = static_cast<const GstMetaTransformCopy *> (data);
  if (copy->region)
    return FALSE;
  return gst_buffer_add_gpu_detect_frame_meta (dest, *m->frame) != nullptr;
}

const GstMetaInfo *meta_info ()
{
  static const GstMetaInfo *info = nullptr;
  if (g_once_init_enter (&info)) {
    const GstMetaInfo *i =
        gst_meta_register (GST_GPU_DETECT_FRAME_META_API_TYPE, "GstGpuDetectFrameMeta", sizeof (GstGpuDetectFrameMeta),
                           meta_init, meta_free, meta_transform);
    g_once_init_leave (&info, i);
  }
  return info;
}

} // namespace

GType gst_gpu_detect_frame_meta_api_get_type (void)
{
  static GType type = 0;
  static const gchar *tags[] = {GST_META_TAG_VIDEO_STR, GST_META_TAG_VIDEO_SIZE_STR,
                                GST_META_TAG_VIDEO_ORIENTATION_STR, GST_META_TAG_VIDEO_COLORSPACE_STR, nullptr};
  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register ("GstGpuDetectFrameMetaAPI", tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

GstGpuDetectFrameMeta *gst_buffer_add_gpu_detect_frame_meta (GstBuffer *buffer,
                                                             std::shared_ptr<const gpudetect::DeviceFrame> frame)
{
  if (!frame)
    return nullptr;
  auto *m = reinterpret_cast<GstGpuDetectFrameMeta *> (gst_buffer_add_meta (buffer, meta_info (), nullptr));
  if (m)
    m->frame = new std::shared_ptr<const gpudetect::DeviceFrame> (std::move (frame));
  return m;
}

std::shared_ptr<const gpudetect::DeviceFrame> gst_buffer_get_gpu_detect_frame (GstBuffer *buffer, cl_context context)
{
  auto *m = reinterpret_cast<GstGpuDetectFrameMeta *> (
      gst_buffer_get_meta (buffer, GST_GPU_DETECT_FRAME_META_API_TYPE));
  if (!m || !m->frame || !*m->frame || (*m->frame)->context != context)
    return nullptr;
  return *m->frame;
}

GstQuery *gpudetect_frame_query_new (cl_context context)
{
  return gst_query_new_custom (GST_QUERY_CUSTOM,
                               gst_structure_new (GPUDETECT_FRAME_QUERY, "context", G_TYPE_POINTER, context, nullptr));
}

cl_context gpudetect_frame_query_context (GstQuery *query)
{
  if (GST_QUERY_TYPE (query) != GST_QUERY_CUSTOM)
    return nullptr;
  const GstStructure *s = gst_query_get_structure (query);
  gpointer c = nullptr;
  if (!s || !gst_structure_has_name (s, GPUDETECT_FRAME_QUERY) || !gst_structure_get (s, "context", G_TYPE_POINTER, &c, nullptr))
    return nullptr;
  return static_cast<cl_context> (c);
}

void gpudetect_frame_query_answer (GstQuery *query)
{
  GstStructure *s = gst_query_writable_structure (query);
  gst_structure_set (s, "colour", G_TYPE_BOOLEAN, TRUE, nullptr);
}

bool gpudetect_frame_query_answered (GstQuery *query)
{
  const GstStructure *s = gst_query_get_structure (query);
  gboolean colour = FALSE;
  return s && gst_structure_get_boolean (s, "colour", &colour) && colour;
}

// Whether a frame gpudetect uploaded is this buffer's frame as the caps
// describe it (an element between the two that changed the pixels drops the
// meta; this also catches one that kept it).
bool gpudetect_device_frame_matches (const gpudetect::DeviceFrame &d, const GstVideoInfo *info)
{
  if (d.width != GST_VIDEO_INFO_WIDTH (info) || d.height != GST_VIDEO_INFO_HEIGHT (info))
    return false;
  using gpudetect::ChromaLayout;
  using gpudetect::PixelFormat;
  switch (GST_VIDEO_INFO_FORMAT (info)) {
  case GST_VIDEO_FORMAT_GRAY8: return d.format == PixelFormat::Gray8 && d.chroma == ChromaLayout::None;
  case GST_VIDEO_FORMAT_NV12: return d.format == PixelFormat::Gray8 && d.chroma == ChromaLayout::Nv12;
  case GST_VIDEO_FORMAT_I420: return d.format == PixelFormat::Gray8 && d.chroma == ChromaLayout::I420;
  case GST_VIDEO_FORMAT_RGBA: return d.format == PixelFormat::Rgba;
  case GST_VIDEO_FORMAT_BGRA: return d.format == PixelFormat::Bgra;
  case GST_VIDEO_FORMAT_RGBx: return d.format == PixelFormat::Rgbx;
  case GST_VIDEO_FORMAT_BGRx: return d.format == PixelFormat::Bgrx;
  default: return false;
  }
}
