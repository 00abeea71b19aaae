// Masked-SAD template search on an OpenCL device (kernels/track.cl): the
// engine under gputrack.  Plain C++, no GStreamer.
//
// Per frame: upload() copies the frame's planes to the device once and
// converts them there to packed RGB; update() cuts templates out of that frame
// (or blends them into the ones a slot holds); search() finds every requested
// template in its search area, all in one launch, and waits for the results.
//
// Frames in flight: the engine holds Config::frames frames on the device,
// each in a frame slot of its own (its planes, its packed RGB, its search's
// requests and results).  upload_async() / attach() enqueue a frame's upload
// (or take another engine's uploaded frame) and its conversion without
// waiting; search_async() enqueues a search and a non-blocking readback;
// search_ready() polls, search_results() waits.  Uploads and conversions run
// on a queue of their own where Config::upload_queue says so, so that frame
// n + 1 uploads while frame n is searched.
// A template is TW x TH pixels of (R, G, B, membership weight); templates live
// in numbered slots on the device.  Boxes are sampled at their own scale
// (box width / TW, box height / TH), so a template costs the same whatever
// the size of its object, and offsets are in template pixels.
#pragma once

#include "cl/cl.h"
#include "core/frame.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpudetect {
namespace track {

enum class ColorFormat { Nv12, I420, Rgbx, Bgrx, Rgba, Bgra, Gray8 };
// Where R, G and B lie in a pixel of a packed format (R, G, B of the others).
cl_int4 rgb_offsets (ColorFormat f);

struct ColorFrame {
  ColorFormat format = ColorFormat::Rgbx;
  int width = 0, height = 0;
  const uint8_t *planes[3] = {}; // Y, UV (NV12) or Y, U, V (I420); one plane for RGB
  int strides[3] = {};
};

// Sizes of the search, fixed when the kernels are built.
struct Geometry {
  int template_w = 32, template_h = 32; // at most 64 x 64 (32-bit sums)
  int search_w = 64, search_h = 64;     // the area searched, >= the template
  int alt_distance = 8;                 // the alternative lies at Chebyshev distance >= this from the best
  int positions_w () const { return search_w - template_w + 1; }
  int positions_h () const { return search_h - template_h + 1; }
  // The offset of the predicted position (no motion): the area's centre.
  int centre_x () const { return (positions_w () - 1) / 2; }
  int centre_y () const { return (positions_h () - 1) / 2; }
  // A symmetric search: radius r template pixels each way.
  static Geometry square (int template_size, int radius, int alt_distance);
};

// A box in frame pixels (top-left, size).
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
};

// The sampling grid of a box (16.16 fixed point): the top-left template
// pixel's centre in the frame, and the step between template pixels.
struct Grid {
  int32_t ox = 0, oy = 0, sx = 0, sy = 0;
};
Grid grid_for (const Box &box, const Geometry &g);

struct Match {
  uint32_t best = 0, alt = 0; // D at the best offset and at the alternative (UINT32_MAX: none)
  int best_x = 0, best_y = 0; // offsets in the search area (template pixels)
  int alt_x = -1, alt_y = -1;
  Box box;                    // the box moved to the best offset (frame pixels)
  // 1 - best / alt in [0, 1]: 0 where the alternative matches as well as the
  // best (an ambiguous match, a flat area), 1 where the best is exact and
  // the alternative is not.
  double confidence = 0;
};

// Device time of the last frame's commands, microseconds (with profiling).
struct Times {
  double upload = 0, convert = 0, extract = 0, search = 0, readback = 0; // search: both launches of a split one
};

// The membership weights this engine puts into new templates (TW x TH,
// 0..255): 255 in the centre, falling linearly from half the box's
// elliptical radius to 32 at the border (corners beyond it: 32 too), so that
// background caught at the corners of a box weighs less than the object.
std::vector<uint8_t> default_mask (int w, int h);

class TemplateSearch {
public:
  struct Config {
    Geometry geometry;
    std::string device;                    // selector, as gpudetect's (used when `share` is null)
    const cl::Device *share = nullptr;     // a device (context) to share: its context, a queue of our own
    bool profile = false;
    int work_group = 0;                    // 0: 256 or the device's limit (a power of two)
    size_t local_bytes = 0;                // local memory the search may use; 0: the device's (rows: 32 KB at most)
    std::vector<uint8_t> mask;             // membership weights; empty: default_mask
    int frames = 1;                        // frame slots (frames in flight), 1..64
    // Uploads and conversions on a second queue, overlapping the search of
    // the frame before: -1 on GPUs and accelerators (not on CPU devices,
    // where both queues run on the same cores), 0 never, 1 always.
    int upload_queue = -1;
    // The search's schedule (kernels/track.cl; gpudetect-bench-track
    // --variants compares them on a device; docs/tracking.md has the
    // figures).  Default: the device kind's measured winner (search.cpp,
    // schedule_defaults): tiles on every device.  Tiles: each template's
    // offset rows in parts whose area rows are held whole in local memory
    // (the template's rows in chunks where they and their area rows do not
    // fit), a work-item per group of offsets, the work-group's size and the
    // parts chosen per search (parts 0) by the device's compute units, or
    // `parts` fixed.  Rows: a work-group per template, the template and the
    // area through local memory in bands (templates whose rows do not fit
    // local memory beside one offset row's area rows: not available).
    enum class Schedule { Default, Rows, Tiles };
    Schedule schedule = Schedule::Default;
    // offsets_per_item: neighbouring offsets of a row each work-item computes
    // at once, reusing template and area pixels from registers (1..8; 0: the
    // default).  parts (tiles): work-groups sharing each template's offset
    // rows, their bests reduced by a second launch (1: one work-group per
    // template searches and reduces; 0: automatic; at most one per offset
    // row; -1: the default).  The rows schedule takes 1 (or -1, 0).
    int offsets_per_item = 0;
    int parts = -1;
    // Tiles on NVIDIA's platform: a pixel's |dR| + |dG| + |dB| by one
    // vabsdiff4 (inline PTX) where the driver takes it (-1), or in integers
    // (0).  Other platforms: integers.
    int sad_ptx = -1;
  };
  static Error create (const Config &config, std::unique_ptr<TemplateSearch> *out);
  ~TemplateSearch ();

  // Copies the frame to the device and converts it (blocking: the frame's
  // memory may be reused on return).
  Error upload (const ColorFrame &frame);
  // Templates of `slots[i]` from `boxes[i]` of the uploaded frame, blended
  // with what the slot held by `blend` / 256 (256: replaced).
  Error update (const std::vector<int> &slots, const std::vector<Box> &boxes, int blend = 256);
  // Searches template `slots[i]` around `predicted[i]` in the uploaded frame;
  // waits for the results.
  Error search (const std::vector<int> &slots, const std::vector<Box> &predicted, std::vector<Match> *out);

  // Asynchronous, per frame slot (0 .. frames() - 1; the calls above use
  // slot 0).  The frame's memory must stay valid until wait_upload().
  Error upload_async (int frame, const ColorFrame &f);
  // Takes a frame another engine on this context uploaded (no copy from
  // the host): its conversion waits for its upload; the frame is held until
  // the slot's next frame.  Fails when the context or the layout differs.
  Error attach (int frame, std::shared_ptr<const DeviceFrame> device);
  Error update_in (int frame, const std::vector<int> &slots, const std::vector<Box> &boxes, int blend = 256);
  Error search_async (int frame, const std::vector<int> &slots, const std::vector<Box> &predicted);
  bool search_ready (int frame) const;                         // never blocks
  Error search_results (int frame, std::vector<Match> *out); // waits
  Error wait_upload (int frame);                            // the frame's host memory is free afterwards
  void finish ();                                               // waits for every command
  int frames () const;
  bool uses_upload_queue () const;
  uint64_t uploads () const;  // frames copied from host memory
  uint64_t attached () const; // frames taken from another engine

  // Slots 0 .. n-1 exist afterwards (their content kept).
  Error reserve (int slots);
  int capacity () const;

  const Geometry &geometry () const;
  const cl::Device &device () const;
  int work_group () const;
  int band_rows () const;
  int offsets_per_item () const;
  Config::Schedule schedule () const;
  bool sad_ptx () const; // the tiles' SAD through vabsdiff4
  // Tiles: the template rows searched at once (the template's height, or
  // fewer where the template and its area rows do not fit local memory:
  // its rows in chunks).  Rows: the template's height.
  int template_chunk_rows () const;
  // Work-groups per template a search of `templates` templates uses.
  int parts_for (int templates) const;
  // Tiles: the work-group size a search of `templates` templates uses.
  int tile_work_group (int templates) const;
  Times last_times () const;
  bool built_from_cache () const;

  // For tests and tools: the converted frame (R, G, B, 0 per pixel), a slot's
  // template (R, G, B, m per pixel), the distances of the last search's
  // request i (positions_h rows of positions_w).
  Error read_frame (std::vector<uint8_t> *rgbx);
  Error read_template (int slot, std::vector<uint8_t> *rgbm);
  Error read_distances (int request, std::vector<uint32_t> *d);

  struct Impl;

private:
  explicit TemplateSearch (std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace track
} // namespace gpudetect
