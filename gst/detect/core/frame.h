// A frame as the engine takes it, and its pixel layout on the device.
#pragma once

#include "cl/cl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gpudetect {

enum class PixelFormat { Gray8, Rgba, Bgra, Rgbx, Bgrx, Argb, Abgr, Xrgb, Xbgr };

// How the chroma of a YUV frame lies beside its luma (Gray8 frames only).
enum class ChromaLayout { None, Nv12, I420 };

struct Frame {
  const uint8_t *data = nullptr; // first pixel (Y plane for NV12/I420: pass Gray8)
  int width = 0, height = 0;
  int stride = 0;                // bytes per row
  PixelFormat format = PixelFormat::Gray8;
  // Chroma planes to upload after the luma, for other engines that read the
  // frame in colour (DetectorConfig::share_frames); the detector itself
  // reads only the luma.  NV12: one plane of interleaved U, V; I420: U, V.
  ChromaLayout chroma = ChromaLayout::None;
  const uint8_t *chroma_data[2] = {};
  int chroma_stride[2] = {};
};

inline int bytes_per_pixel (PixelFormat f) { return f == PixelFormat::Gray8 ? 1 : 4; }

// Byte offsets of R, G, B inside a 4-byte pixel.
inline cl_int4 rgb_offsets (PixelFormat f) {
  switch (f) {
  case PixelFormat::Rgba: case PixelFormat::Rgbx: return {{0, 1, 2, 0}};
  case PixelFormat::Bgra: case PixelFormat::Bgrx: return {{2, 1, 0, 0}};
  case PixelFormat::Argb: case PixelFormat::Xrgb: return {{1, 2, 3, 0}};
  case PixelFormat::Abgr: case PixelFormat::Xbgr: return {{3, 2, 1, 0}};
  default: return {{0, 0, 0, 0}};
  }
}

// The frame as it lies on the device after the upload: rows packed
// (width * bytes per pixel apart), grey or 4-byte RGB.
struct FrameLayout {
  PixelFormat format = PixelFormat::Gray8;
  int width = 0, height = 0;
  int bpp () const { return bytes_per_pixel (format); }
  int stride () const { return width * bpp (); }
};

// A frame one engine uploaded, for another engine on the same OpenCL context
// to read instead of uploading it again (gpudetect's frames, read by
// gputrack: docs/tracking.md).  Planes lie in `mem` at `offset[i]`,
// `stride[i]` bytes a row: the luma (or the 4-byte RGB pixels) first, rows
// packed; then, where `chroma` says so, NV12's interleaved U, V plane or
// I420's U and V planes, rows of (width + 1) / 2 samples packed.  Holders
// keep `mem` from being overwritten: the uploading engine gives each frame a
// buffer of its own while another holds it.  Commands that read it wait for
// `uploaded`.
struct DeviceFrame {
  cl_context context = nullptr; // the context `mem` belongs to
  cl::Mem mem;
  cl::Event uploaded;
  PixelFormat format = PixelFormat::Gray8;
  ChromaLayout chroma = ChromaLayout::None;
  int width = 0, height = 0;
  int planes = 1;
  size_t offset[3] = {};
  int stride[3] = {};
  size_t bytes () const;         // everything the planes take in `mem`
};

// The chroma planes' geometry for a width x height frame: bytes per row and
// rows of each plane (0 where the layout has no such plane).
inline void chroma_geometry (ChromaLayout c, int width, int height, int stride[2], int rows[2]) {
  const int cw = (width + 1) / 2, ch = (height + 1) / 2;
  stride[0] = c == ChromaLayout::Nv12 ? 2 * cw : c == ChromaLayout::I420 ? cw : 0;
  stride[1] = c == ChromaLayout::I420 ? cw : 0;
  rows[0] = c == ChromaLayout::None ? 0 : ch;
  rows[1] = c == ChromaLayout::I420 ? ch : 0;
}

inline size_t DeviceFrame::bytes () const {
  size_t end = 0;
  for (int i = 0; i < planes; i++) {
    const size_t rows = i == 0 ? static_cast<size_t> (height) : static_cast<size_t> ((height + 1) / 2);
    end = std::max (end, offset[i] + rows * static_cast<size_t> (stride[i]));
  }
  return end;
}

} // namespace gpudetect
