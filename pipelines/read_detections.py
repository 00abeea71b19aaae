#!/usr/bin/env python3
"""Reads gpudetect's results in an application: a pad probe after gpudetect
walks every region-of-interest meta of every buffer and prints its box and its
"detection" parameters (label, confidence, normalised box), and the tracker's
object id where gputrack gave one.

    pipelines/read_detections.py FILE [MODEL]

FILE is anything decodebin plays (a video, a JPEG or PNG image), or a binary
PGM image (read here and pushed through appsrc).  Prints one line per object:

    frame 0 pts 0:00:00.000000000 face x=88 y=73 w=90 h=90 confidence=0.83 label_id=0 box=(0.344,0.243)-(0.695,0.543)

Needs PyGObject with GStreamer's introspection data (Debian: python3-gi,
gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0); exits 77 without them.
"""
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import GLib, Gst, GstVideo
except (ImportError, ValueError) as e:
    hint = ""
    if sys.executable != "/usr/bin/python3":
        hint = f" (Debian's python3-gi serves /usr/bin/python3, not {sys.executable}: run /usr/bin/python3 {sys.argv[0]})"
    print(f"PyGObject with GStreamer introspection is needed: {e}{hint}", file=sys.stderr)
    sys.exit(77)


def read_pgm(path):
    """(width, height, bytes) of a binary PGM (P5, maxval 255)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":  # a comment, to the end of its line
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P5" or int(fields[3]) != 255:
        raise ValueError(f"{path}: not a binary 8-bit PGM")
    w, h = int(fields[1]), int(fields[2])
    pixels = data[pos + 1 : pos + 1 + w * h]
    if len(pixels) != w * h:
        raise ValueError(f"{path}: truncated")
    return w, h, pixels


def regions(buf):
    """Every GstVideoRegionOfInterestMeta of the buffer.  PyGObject cannot
    iterate a buffer's metas (gst_buffer_iterate_meta is not introspectable
    before gst-python's overrides), so they are fetched by id: gpudetect
    numbers the regions of a buffer 0, 1, 2, ..."""
    api = GstVideo.VideoRegionOfInterestMeta.get_info().api
    count = buf.get_n_meta(api)
    found, roi_id = [], 0
    while len(found) < count and roi_id < 4 * count + 64:
        meta = GstVideo.buffer_get_video_region_of_interest_meta_id(buf, roi_id)
        if meta is not None:
            found.append(meta)
        roi_id += 1
    return found


def describe(meta):
    text = f"{GLib.quark_to_string(meta.roi_type)} x={meta.x} y={meta.y} w={meta.w} h={meta.h}"
    det = meta.get_param("detection")
    if det is not None:
        ok, conf = det.get_double("confidence")
        if ok:
            text += f" confidence={conf:.2f}"
        ok, label_id = det.get_int("label_id")
        if ok:
            text += f" label_id={label_id}"
        box = [det.get_double(k) for k in ("x_min", "y_min", "x_max", "y_max")]
        if all(ok for ok, _ in box):
            x0, y0, x1, y1 = (v for _, v in box)
            text += f" box=({x0:.3f},{y0:.3f})-({x1:.3f},{y1:.3f})"
    obj = meta.get_param("object_id")
    if obj is not None:
        ok, oid = obj.get_int("id")
        if ok:
            text += f" id={oid}"
    return text


def time_text(t):
    """A clock time as GStreamer prints it (h:mm:ss.nnnnnnnnn)."""
    if t == Gst.CLOCK_TIME_NONE:
        return "none"
    s, ns = divmod(t, Gst.SECOND)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}.{ns:09d}"


def main(argv):
    if len(argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    path, model = argv[1], argv[2] if len(argv) > 2 else "lbp-frontalface-improved"
    Gst.init(None)
    detect = f"gpudetect name=detect model={model} min-size-width=24 min-size-height=24"
    pgm = None
    if path.lower().endswith(".pgm"):
        pgm = read_pgm(path)
        w, h, _ = pgm
        desc = (f"appsrc name=src format=time caps=video/x-raw,format=GRAY8,width={w},height={h},framerate=1/1 ! "
                f"{detect} ! fakesink")
    else:
        desc = f'filesrc location="{path}" ! decodebin ! videoconvert ! {detect} ! fakesink'
    try:
        pipeline = Gst.parse_launch(desc)
    except GLib.Error as e:
        print(f"cannot make the pipeline: {e.message}", file=sys.stderr)
        return 1

    frames = [0]

    def on_buffer(pad, info):
        buf = info.get_buffer()
        for meta in regions(buf):
            print(f"frame {frames[0]} pts {time_text(buf.pts)} {describe(meta)}", flush=True)
        frames[0] += 1
        return Gst.PadProbeReturn.OK

    pipeline.get_by_name("detect").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, on_buffer)
    pipeline.set_state(Gst.State.PLAYING)
    if pgm is not None:
        src = pipeline.get_by_name("src")
        buf = Gst.Buffer.new_wrapped(pgm[2])
        buf.pts, buf.duration = 0, Gst.SECOND
        src.emit("push-buffer", buf)
        src.emit("end-of-stream")
    msg = pipeline.get_bus().timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    status = 0
    if msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        print(f"error: {err.message} ({dbg})", file=sys.stderr)
        status = 1
    pipeline.set_state(Gst.State.NULL)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
