// The template search's frames: uploads and their conversion to packed RGB
// on the device, frames another engine uploaded, and the tools' read-backs.
#include "search_impl.h"

#include <algorithm>
#include <cstring>

namespace gpudetect {
namespace track {

namespace {
// Bytes of each plane the kernel reads, and its height.
void plane_sizes (const ColorFrame &f, int *n, size_t bytes[3]) {
  const int ch = (f.height + 1) / 2;
  switch (f.format) {
  case ColorFormat::Nv12:
    *n = 2;
    bytes[0] = static_cast<size_t> (f.strides[0]) * f.height;
    bytes[1] = static_cast<size_t> (f.strides[1]) * ch;
    break;
  case ColorFormat::I420:
    *n = 3;
    bytes[0] = static_cast<size_t> (f.strides[0]) * f.height;
    bytes[1] = static_cast<size_t> (f.strides[1]) * ch;
    bytes[2] = static_cast<size_t> (f.strides[2]) * ch;
    break;
  default:
    *n = 1;
    bytes[0] = static_cast<size_t> (f.strides[0]) * f.height;
    break;
  }
}
} // namespace

static cl_int convert_format (ColorFormat f) {
  return f == ColorFormat::Nv12 ? 0 : f == ColorFormat::I420 ? 1 : f == ColorFormat::Gray8 ? 3 : 2;
}

Error TemplateSearch::upload_async (int frame, const ColorFrame &f) {
  Impl &m = *impl_;
  FrameSlot *fs = nullptr;
  if (Error e = m.slot (frame, &fs))
    return e;
  if (f.width <= 0 || f.height <= 0 || !f.planes[0])
    return {"invalid frame"};
  int n = 0;
  size_t bytes[3] = {};
  plane_sizes (f, &n, bytes);
  for (int i = 0; i < n; i++)
    if (!f.planes[i] || f.strides[i] <= 0)
      return {"invalid frame plane"};
  cl_event wait[1];
  cl_uint nwait = 0;
  if (Error e = m.prepare (*fs, f.width, f.height, bytes[0] + bytes[1] + bytes[2], wait, &nwait))
    return e;
  size_t off[3] = {0, 0, 0};
  for (int i = 1; i < n; i++)
    off[i] = off[i - 1] + bytes[i - 1];
  // Planes that follow one another in memory (as decoders lay out NV12 and
  // I420 frames) go in one write: one command's overhead instead of two or
  // three.
  bool adjacent = true;
  for (int i = 1; i < n; i++)
    adjacent = adjacent && f.planes[i] == f.planes[i - 1] + bytes[i - 1];
  const int writes = adjacent ? 1 : n;
  fs->upload_events.resize (writes);
  for (int i = 0; i < writes; i++)
    GPUDETECT_CL_TRY (clEnqueueWriteBuffer (m.rt.uploads (), fs->raw.get (), CL_FALSE, off[i],
                                            adjacent ? off[n - 1] + bytes[n - 1] : bytes[i], f.planes[i],
                                            i == 0 ? nwait : 0, i == 0 && nwait ? wait : nullptr,
                                            m.rt.profiled (&fs->upload_events[i])));
  const int strides[3] = {f.strides[0], n > 1 ? f.strides[1] : 0, n > 2 ? f.strides[2] : 0};
  if (Error e = m.enqueue_convert (*fs, fs->raw, convert_format (f.format), off, strides, rgb_offsets (f.format),
                                       0, nullptr))
    return e;
  m.uploads++;
  return {};
}

Error TemplateSearch::attach (int frame, std::shared_ptr<const DeviceFrame> d) {
  Impl &m = *impl_;
  FrameSlot *fs = nullptr;
  if (Error e = m.slot (frame, &fs))
    return e;
  if (!d || !d->mem || d->context != m.rt.device ().context.get ())
    return {"the shared frame lies on another OpenCL context"};
  if (d->width <= 0 || d->height <= 0 || d->planes < 1 || d->planes > 3)
    return {"invalid shared frame"};
  cl_int format;
  cl_int4 rgb = {{0, 1, 2, 0}};
  if (d->format == PixelFormat::Gray8) {
    format = d->chroma == ChromaLayout::Nv12 ? 0 : d->chroma == ChromaLayout::I420 ? 1 : 3;
    if (d->planes != (d->chroma == ChromaLayout::Nv12 ? 2 : d->chroma == ChromaLayout::I420 ? 3 : 1))
      return {"invalid shared frame"};
  } else {
    format = 2;
    rgb = gpudetect::rgb_offsets (d->format);
  }
  cl_event wait[2];
  cl_uint nwait = 0;
  if (Error e = m.prepare (*fs, d->width, d->height, 16, wait, &nwait))
    return e;
  if (d->uploaded)
    wait[nwait++] = d->uploaded.get ();
  const int strides[3] = {d->stride[0], d->stride[1], d->stride[2]};
  if (Error e = m.enqueue_convert (*fs, d->mem, format, d->offset, strides, rgb, nwait, wait))
    return e;
  fs->shared = std::move (d);
  m.attached++;
  return {};
}

Error TemplateSearch::upload (const ColorFrame &f) {
  if (Error e = upload_async (0, f))
    return e;
  return wait_upload (0);
}

Error TemplateSearch::wait_upload (int frame) {
  Impl &m = *impl_;
  FrameSlot *fs = nullptr;
  if (Error e = m.slot (frame, &fs))
    return e;
  if (fs->converted)
    if (Error e = runtime::wait (fs->converted.get (), "the frame's conversion failed on the device"))
      return e;
  fs->shared.reset (); // converted: the other engine's frame is free again
  return {};
}

Times TemplateSearch::last_times () const {
  const Impl &m = *impl_;
  const FrameSlot &f = m.frames[m.current];
  Times t;
  for (const cl::Event &e : f.upload_events)
    t.upload += runtime::span_us (e);
  t.convert = runtime::span_us (f.converted);
  t.extract = runtime::span_us (f.extract_event);
  // the search and its parts' reduction: first start to last end
  cl_ulong first = ~0ull, last = 0;
  t.search = runtime::span_us (f.search_event, &first, &last);
  if (f.reduce_event && runtime::span_us (f.reduce_event, &first, &last) > 0)
    t.search = (last - first) / 1000.0;
  t.readback = runtime::span_us (f.read_event);
  return t;
}

Error TemplateSearch::read_frame (std::vector<uint8_t> *rgbx) {
  Impl &m = *impl_;
  const FrameSlot &f = m.frames[m.current];
  rgbx->resize (static_cast<size_t> (f.fw) * f.fh * 4);
  if (rgbx->empty ())
    return {};
  cl_event wait[1];
  const cl_uint nwait = m.wait_converted (f, wait);
  GPUDETECT_CL_TRY (clEnqueueReadBuffer (m.rt.queue (), f.rgb.get (), CL_TRUE, 0, rgbx->size (), rgbx->data (),
                                         nwait, nwait ? wait : nullptr, nullptr));
  return {};
}

Error TemplateSearch::read_template (int slot, std::vector<uint8_t> *rgbm) {
  Impl &m = *impl_;
  if (slot < 0 || slot >= m.slots)
    return {"no such slot"};
  rgbm->resize (m.template_bytes ());
  GPUDETECT_CL_TRY (clEnqueueReadBuffer (m.rt.queue (), m.templates.get (), CL_TRUE, m.template_bytes () * slot,
                                         m.template_bytes (), rgbm->data (), 0, nullptr, nullptr));
  return {};
}

Error TemplateSearch::read_distances (int request, std::vector<uint32_t> *d) {
  Impl &m = *impl_;
  if (request < 0 || request >= m.last_requests)
    return {"no such request in the last search"};
  const size_t n = static_cast<size_t> (m.cfg.geometry.positions_w ()) * m.cfg.geometry.positions_h ();
  d->resize (n);
  GPUDETECT_CL_TRY (clEnqueueReadBuffer (m.rt.queue (), m.dmap.get (), CL_TRUE, n * sizeof (cl_uint) * request,
                                         n * sizeof (cl_uint), d->data (), 0, nullptr, nullptr));
  return {};
}

} // namespace track
} // namespace gpudetect
