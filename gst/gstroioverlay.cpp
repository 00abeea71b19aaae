/**
 * SECTION:element-roioverlay
 * @title: roioverlay
 *
 * Draws every GstVideoRegionOfInterestMeta of a frame — from gpudetect or any
 * other element — as a box with a label ("face 0.83 #2": label, confidence,
 * object id), straight into GRAY8, NV12, I420 or 4-byte RGB frames.  Works
 * from x/y/w/h and roi_type alone when the "detection" parameters were dropped
 * (videoscale and videoconvert do that in GStreamer 1.22).
 *
 * With #GstRoiOverlay:expire-overlay, the boxes of the last frame that had
 * metadata keep being drawn on frames without metadata for that long (for
 * gpudetect's inference-interval).
 */
#include "config.h"

#include "gstroioverlay.h"

#include "elementdef.h"
#include "font.h"
#include "gpudetect-elements.h"
#include "properties.h"
#include "roimeta.h"

#include <gst/video/gstvideometa.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

GST_DEBUG_CATEGORY_STATIC (gst_roi_overlay_debug);
#define GST_CAT_DEFAULT gst_roi_overlay_debug

#define OVERLAY_CAPS \
  GST_VIDEO_CAPS_MAKE ("{ GRAY8, NV12, I420, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR }")

#define DEFAULT_OUTLINE_COLOR 0
#define DEFAULT_LABELS_COLOR 0xffffffff
#define DEFAULT_LINE_WIDTH 2

namespace {

struct Box {
  int x, y, w, h;
  std::string label;
  double confidence; // < 0: unknown
  gint64 object_id;  // < 0: none
  gint roi_id;
};

struct Settings {
  guint outline_color = DEFAULT_OUTLINE_COLOR;
  bool draw_labels = true;
  guint labels_color = DEFAULT_LABELS_COLOR;
  guint line_width = DEFAULT_LINE_WIDTH;
  std::vector<std::string> filter;
  std::string filter_string;
  guint64 expire = 0;
  bool show_confidence = true;
};

struct Color {
  guint8 r, g, b;
  guint8 y, u, v;
};

Color make_color (guint argb)
{
  Color c;
  c.r = (argb >> 16) & 0xff, c.g = (argb >> 8) & 0xff, c.b = argb & 0xff;
  c.y = static_cast<guint8> (((66 * c.r + 129 * c.g + 25 * c.b + 128) >> 8) + 16);
  c.u = static_cast<guint8> (((-38 * c.r - 74 * c.g + 112 * c.b + 128) >> 8) + 128);
  c.v = static_cast<guint8> (((112 * c.r - 94 * c.g - 18 * c.b + 128) >> 8) + 128);
  return c;
}

const guint kPalette[] = {0xff00ff00, 0xffff3030, 0xff3080ff, 0xffffd700, 0xffff00ff, 0xff00ffff,
                          0xffff8c00, 0xff9acd32, 0xffba55d3, 0xff40e0d0, 0xffff69b4, 0xfff0f0f0};

// Fills [x0, x1) x [y0, y1), clipped to the frame.
void fill_rect (GstVideoFrame *f, int x0, int y0, int x1, int y1, const Color &c)
{
  const int W = GST_VIDEO_FRAME_WIDTH (f), H = GST_VIDEO_FRAME_HEIGHT (f);
  x0 = std::max (x0, 0), y0 = std::max (y0, 0), x1 = std::min (x1, W), y1 = std::min (y1, H);
  if (x0 >= x1 || y0 >= y1)
    return;
  const GstVideoFormat fmt = GST_VIDEO_FRAME_FORMAT (f);
  if (GST_VIDEO_FORMAT_INFO_IS_YUV (f->info.finfo) || fmt == GST_VIDEO_FORMAT_GRAY8) {
    guint8 *yp = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (f, 0));
    const int ys = GST_VIDEO_FRAME_PLANE_STRIDE (f, 0);
    for (int y = y0; y < y1; y++)
      std::fill (yp + y * ys + x0, yp + y * ys + x1, c.y);
    if (fmt == GST_VIDEO_FORMAT_GRAY8)
      return;
    const int cx0 = x0 / 2, cx1 = (x1 + 1) / 2, cy0 = y0 / 2, cy1 = (y1 + 1) / 2;
    if (fmt == GST_VIDEO_FORMAT_NV12) {
      guint8 *uv = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (f, 1));
      const int s = GST_VIDEO_FRAME_PLANE_STRIDE (f, 1);
      for (int y = cy0; y < cy1; y++)
        for (int x = cx0; x < cx1; x++) {
          uv[y * s + 2 * x] = c.u;
          uv[y * s + 2 * x + 1] = c.v;
        }
    } else { // I420
      guint8 *u = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (f, 1));
      guint8 *v = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (f, 2));
      const int us = GST_VIDEO_FRAME_PLANE_STRIDE (f, 1), vs = GST_VIDEO_FRAME_PLANE_STRIDE (f, 2);
      for (int y = cy0; y < cy1; y++) {
        std::fill (u + y * us + cx0, u + y * us + cx1, c.u);
        std::fill (v + y * vs + cx0, v + y * vs + cx1, c.v);
      }
    }
    return;
  }
  // 4-byte RGB family
  guint8 *p = static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (f, 0));
  const int s = GST_VIDEO_FRAME_PLANE_STRIDE (f, 0);
  const int ps = GST_VIDEO_FRAME_COMP_PSTRIDE (f, 0);
  const int ro = GST_VIDEO_FRAME_COMP_OFFSET (f, GST_VIDEO_COMP_R);
  const int go = GST_VIDEO_FRAME_COMP_OFFSET (f, GST_VIDEO_COMP_G);
  const int bo = GST_VIDEO_FRAME_COMP_OFFSET (f, GST_VIDEO_COMP_B);
  const bool alpha = GST_VIDEO_FORMAT_INFO_HAS_ALPHA (f->info.finfo);
  const int ao = alpha ? GST_VIDEO_FRAME_COMP_OFFSET (f, GST_VIDEO_COMP_A) : 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) {
      guint8 *q = p + y * s + x * ps;
      q[ro] = c.r, q[go] = c.g, q[bo] = c.b;
      if (alpha)
        q[ao] = 255;
    }
}

void draw_text (GstVideoFrame *f, int x, int y, const std::string &text, const Color &fg)
{
  for (size_t i = 0; i < text.size (); i++) {
    unsigned char ch = static_cast<unsigned char> (text[i]);
    if (ch < 32 || ch > 126)
      ch = '?';
    const uint8_t *glyph = kFont[ch - 32];
    for (int r = 0; r < kFontHeight; r++)
      for (int b = 0; b < kFontWidth; b++)
        if (glyph[r] & (0x80 >> b)) {
          int px = x + static_cast<int> (i) * kFontWidth + b, py = y + r;
          fill_rect (f, px, py, px + 1, py + 1, fg);
        }
  }
}

} // namespace

struct GstRoiOverlayPrivate {
  GpuDetectSettings<Settings> settings; // its lock guards the last boxes too
  std::vector<Box> last;
  GstClockTime last_pts = GST_CLOCK_TIME_NONE;
};

GPUDETECT_DEFINE_ELEMENT (GstRoiOverlay, gst_roi_overlay, GstVideoFilter, GST_TYPE_VIDEO_FILTER, roioverlay)

static std::vector<Box> read_boxes (GstBuffer *buf)
{
  std::vector<Box> boxes;
  gpudetect_roi_for_each (buf, [&] (GstVideoRegionOfInterestMeta *roi) {
    const RoiDetection d = gpudetect_roi_detection (roi);
    Box b{static_cast<int> (roi->x), static_cast<int> (roi->y), static_cast<int> (roi->w), static_cast<int> (roi->h),
          d.label, d.confidence.value_or (-1.0), -1, roi->id};
    if (gint64 id; gpudetect_roi_object_id (roi, &id))
      b.object_id = id;
    boxes.push_back (std::move (b));
  });
  return boxes;
}

static GstFlowReturn gst_roi_overlay_transform_frame_ip (GstVideoFilter *filter, GstVideoFrame *frame)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (filter);
  GstRoiOverlayPrivate *priv = self->priv;
  Settings s;
  std::vector<Box> boxes = read_boxes (frame->buffer);
  const GstClockTime pts = GST_BUFFER_PTS (frame->buffer);
  {
    std::lock_guard<std::mutex> g (priv->settings.lock);
    s = priv->settings.values;
    if (!boxes.empty ()) {
      priv->last = boxes;
      priv->last_pts = pts;
    } else if (s.expire > 0 && GST_CLOCK_TIME_IS_VALID (pts) && GST_CLOCK_TIME_IS_VALID (priv->last_pts) &&
               pts >= priv->last_pts && pts - priv->last_pts <= s.expire) {
      boxes = priv->last;
    }
  }
  const int lw = static_cast<int> (s.line_width);
  const Color text_color = make_color (s.labels_color);
  for (const Box &b : boxes) {
    if (!s.filter.empty () && std::find (s.filter.begin (), s.filter.end (), b.label) == s.filter.end ())
      continue;
    guint argb = s.outline_color;
    if (argb == 0) {
      guint key = b.object_id >= 0 ? static_cast<guint> (b.object_id) : g_str_hash (b.label.c_str ());
      argb = kPalette[key % G_N_ELEMENTS (kPalette)];
    }
    const Color c = make_color (argb);
    fill_rect (frame, b.x, b.y, b.x + b.w, b.y + lw, c);
    fill_rect (frame, b.x, b.y + b.h - lw, b.x + b.w, b.y + b.h, c);
    fill_rect (frame, b.x, b.y, b.x + lw, b.y + b.h, c);
    fill_rect (frame, b.x + b.w - lw, b.y, b.x + b.w, b.y + b.h, c);
    if (!s.draw_labels)
      continue;
    std::string text = b.label;
    char buf[48];
    if (s.show_confidence && b.confidence >= 0) {
      std::snprintf (buf, sizeof buf, " %.2f", b.confidence);
      text += buf;
    }
    if (b.object_id >= 0) {
      std::snprintf (buf, sizeof buf, " #%" G_GINT64_FORMAT, b.object_id);
      text += buf;
    }
    if (text.empty ())
      continue;
    const int tw = static_cast<int> (text.size ()) * kFontWidth + 4, th = kFontHeight + 2;
    int tx = b.x, ty = b.y - th;
    if (ty < 0)
      ty = b.y + lw; // no room above: inside the box
    fill_rect (frame, tx, ty, tx + tw, ty + th, c);
    draw_text (frame, tx + 2, ty + 1, text, text_color);
  }
  return GST_FLOW_OK;
}

static gboolean gst_roi_overlay_start (GstBaseTransform *trans)
{
  GstRoiOverlay *self = GST_ROI_OVERLAY (trans);
  std::lock_guard<std::mutex> g (self->priv->settings.lock);
  self->priv->last.clear ();
  self->priv->last_pts = GST_CLOCK_TIME_NONE;
  return TRUE;
}

static GpuDetectSettings<Settings> &settings_of (GObject *object) { return GST_ROI_OVERLAY (object)->priv->settings; }

// label-filter: its labels, stripped, empty ones left out
static void filter_changed (GObject *, Settings &s)
{
  s.filter.clear ();
  gchar **parts = g_strsplit (s.filter_string.c_str (), ",", -1);
  for (gchar **p = parts; p && *p; p++) {
    g_strstrip (*p);
    if (**p)
      s.filter.push_back (*p);
  }
  g_strfreev (parts);
}

static void gst_roi_overlay_init (GstRoiOverlay *self) { self->priv = new GstRoiOverlayPrivate (); }

static void gst_roi_overlay_class_init (GstRoiOverlayClass *klass)
{
  GST_DEBUG_CATEGORY_INIT (gst_roi_overlay_debug, "roioverlay", 0, "Region-of-interest overlay");

  GpuDetectProperties<Settings> props = gpudetect_element_class_init (klass, gst_roi_overlay_finalize, settings_of);
  const GParamFlags playing = GPUDETECT_PARAM_PLAYING;
  props.field (g_param_spec_uint ("object-detection-outline-color", "Outline color",
      "Box colour as 0xAARRGGBB; 0 picks a colour per object id, else per label", 0, G_MAXUINT,
      DEFAULT_OUTLINE_COLOR, playing), &Settings::outline_color);
  props.field (g_param_spec_boolean ("draw-labels", "Draw labels", "Draw label, confidence and object id above each box",
      TRUE, playing), &Settings::draw_labels);
  props.field (g_param_spec_uint ("labels-color", "Labels color", "Text colour as 0xAARRGGBB", 0, G_MAXUINT,
      DEFAULT_LABELS_COLOR, playing), &Settings::labels_color);
  props.field (g_param_spec_uint ("line-width", "Line width", "Box outline width in pixels", 1, 64, DEFAULT_LINE_WIDTH,
      playing), &Settings::line_width);
  props.field (g_param_spec_string ("label-filter", "Label filter",
      "Comma-separated labels to draw (empty: draw every region)", "", playing), &Settings::filter_string,
      filter_changed);
  props.field (g_param_spec_uint64 ("expire-overlay", "Expire overlay",
      "Keep drawing the last boxes on frames without metadata for this many nanoseconds (0: never)", 0,
      G_MAXUINT64, 0, playing), &Settings::expire);
  props.field (g_param_spec_boolean ("show-confidence", "Show confidence", "Append the confidence to the label", TRUE,
      playing), &Settings::show_confidence);

  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstVideoFilterClass *filter_class = GST_VIDEO_FILTER_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  gst_element_class_set_static_metadata (element_class, "Region of interest overlay", "Filter/Effect/Video",
      "Draws region-of-interest metadata (boxes, labels, confidences, object ids) into video frames",
      "gpudetect developers");
  GstCaps *caps = gst_caps_from_string (OVERLAY_CAPS);
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_roi_overlay_start);
  filter_class->transform_frame_ip = GST_DEBUG_FUNCPTR (gst_roi_overlay_transform_frame_ip);
}
