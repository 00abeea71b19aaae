#!/usr/bin/env python3
"""Assembles the labelled sources of fetch-data.sh into the trainer's layout (see README.md): hard links the
images, writes faces-{train,eval}.txt, negatives-{train,eval}.txt and SUMMARY.txt.  Standard library only."""
import argparse
import os
import sys

BINS = [(0, 24), (24, 32), (32, 48), (48, 64), (64, 96), (96, 128), (128, 192), (192, 256), (256, 1 << 30)]


def boxes(field):
    return [tuple(int(v) for v in b.split(",")) for b in field.split()] if field else []


def pgm_size(path):
    with open(path, "rb") as f:
        head = f.read(64).split()
    return int(head[1]), int(head[2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--split", required=True)
    ap.add_argument("--faces", nargs="*", default=[])
    ap.add_argument("--negatives", nargs="*", default=[])
    a = ap.parse_args()

    split = {}
    for line in open(a.split):
        f = line.split("#")[0].split()
        if len(f) == 2:
            split[f[0]] = f[1]
    lists = {n: [] for n in ("faces-train", "faces-eval", "negatives-train", "negatives-eval")}
    rows = []
    hist = {"train": [0] * len(BINS), "eval": [0] * len(BINS)}
    neg_pixels = {"train": 0, "eval": 0}

    def link(dest):
        src = os.path.join(a.cache, "images", dest)
        dst = os.path.join(a.out, "images", dest)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.link(src, dst)
        return "images/" + dest

    for src in a.faces + a.negatives:
        if src not in split:
            sys.exit(f"{src}: not in {a.split}")
        s = split[src]
        is_neg = src in a.negatives
        n_img = n_faces = n_ign = n_dropped = pixels = 0
        for line in open(os.path.join(a.cache, "labels", src + ".tsv")):
            dest, faces, ignore = line.rstrip("\n").split("\t")[:3]
            fb, ib = boxes(faces), boxes(ignore)
            if is_neg:
                if fb or ib:
                    n_dropped += 1  # a teacher saw a face: not a negative image
                    continue
                rel = link(dest)
                lists["negatives-" + s].append(rel)
                w, h = pgm_size(os.path.join(a.out, rel))
                pixels += w * h
                n_img += 1
            else:
                if not fb:
                    n_dropped += 1  # no face both teachers agree on
                    continue
                rel = link(dest)
                lists["faces-" + s].append(f"{rel}\t{faces}\t{ignore}")
                n_img += 1
                n_faces += len(fb)
                n_ign += len(ib)
                for b in fb:
                    side = min(b[2], b[3])
                    for i, (lo, hi) in enumerate(BINS):
                        if lo <= side < hi:
                            hist[s][i] += 1
        neg_pixels[s] += pixels
        rows.append((src, s, "negatives" if is_neg else "faces", n_img, n_faces, n_ign, n_dropped, pixels))

    for name, lines in lists.items():
        with open(os.path.join(a.out, name + ".txt"), "w") as f:
            f.writelines(l + "\n" for l in sorted(lines))

    with open(os.path.join(a.out, "SUMMARY.txt"), "w") as f:
        f.write("# per source: split, kind, images kept, faces (both teachers), ignore boxes (one teacher),\n"
                "# images dropped (faces: no agreed face; negatives: a teacher found a face), negative pixels\n")
        f.write(f"{'source':24} {'split':5} {'kind':9} {'images':>6} {'faces':>6} {'ignore':>6} {'dropped':>7}"
                f" {'Mpixels':>8}\n")
        for r in rows:
            f.write(f"{r[0]:24} {r[1]:5} {r[2]:9} {r[3]:6} {r[4]:6} {r[5]:6} {r[6]:7} {r[7] / 1e6:8.1f}\n")
        for s in ("train", "eval"):
            sel = [r for r in rows if r[1] == s]
            fi = sum(r[3] for r in sel if r[2] == "faces")
            f.write(f"\n{s}: {fi} face images, {sum(r[4] for r in sel)} faces, {sum(r[5] for r in sel)} ignore boxes;"
                    f" {len(lists['negatives-' + s])} negative images, {neg_pixels[s] / 1e6:.1f} Mpixels\n")
            f.write(f"{s} face sizes (min(w,h), px):")
            for (lo, hi), n in zip(BINS, hist[s]):
                f.write(f"  {lo}-{hi - 1 if hi < 1 << 30 else ''}: {n}")
            f.write("\n")


if __name__ == "__main__":
    main()
