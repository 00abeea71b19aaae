#!/usr/bin/env python3
"""Tables of the WaldBoost benchmark (bench/run-waldboost-benchmarks.sh) as markdown.

    bench/waldboost_report.py OUTDIR TAG
"""
import glob
import json
import os
import sys


def load(path):
    with open(path) as f:
        d = json.load(f)
    return d, {r["frame"]: r for r in d["results"]}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, tag = sys.argv[1], sys.argv[2]
    models = ["waldboost-frontalface-fast", "waldboost-frontalface"]
    device = None
    print("### Both models, standard frames (ms; medians)\n")
    print("| model | frame | objects | device | end to end | p95 | pipelined | launches | syncs | lost |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in models:
        p = f"{out}/wb-{tag}-{m}.json"
        if not os.path.exists(p):
            continue
        d, rows = load(p)
        device = d["device"]
        for f, r in rows.items():
            print(f"| {m} | {f} | {r['objects']} | {r['device_ms']:.3f} | {r['e2e_median_ms']:.3f} | "
                  f"{r['e2e_p95_ms']:.3f} | {r['pipelined_ms']:.3f} | {r['launches']} | {r['host_syncs']:.2f} | "
                  f"{r['lost']} |")
    print(f"\nDevice: {device}\n")

    print("### Staged reduction: divisors, lost candidates and time (device ms, median)\n")
    print("| model | divisors | 1080p-crowd device | lost | vga-faces device | lost |")
    print("|---|---|---|---|---|---|")
    for m in models:
        prefix = f"{out}/wb-{tag}-divisors-{m}-"
        files = sorted(p for p in glob.glob(prefix + "*.json") if p[len(prefix):-5].replace("-", "").isdigit())
        for p in files:
            dv = p[len(prefix):-5].replace("-", ",")
            _, rows = load(p)
            c, v = rows.get("1080p-crowd.pgm"), rows.get("vga-faces.pgm")
            print(f"| {m} | {dv} | {c['device_ms']:.3f} | {c['lost']} | {v['device_ms']:.3f} | {v['lost']} |")

    print("\n### Synchronisation steps (1080p, device ms, median)\n")
    print("| model | sync-first | sync-step | crowd | empty | lost |")
    print("|---|---|---|---|---|---|")
    for m in models:
        best = None
        prefix = f"{out}/wb-{tag}-sync-{m}-"
        files = [p for p in glob.glob(prefix + "*.json") if p[len(prefix):-5].replace("-", "").isdigit()]
        for p in sorted(files, key=lambda p: [int(x) for x in p[len(prefix):-5].split("-")]):
            f, s = p[len(prefix):-5].split("-")
            _, rows = load(p)
            c, e = rows["1080p-crowd.pgm"], rows["1080p-empty.pgm"]
            line = (int(f), int(s), c["device_ms"], e["device_ms"], c["lost"] + e["lost"])
            print(f"| {m} | {line[0]} | {line[1]} | {line[2]:.3f} | {line[3]:.3f} | {line[4]} |")
            if line[4] == 0 and (best is None or line[2] + line[3] < best[2] + best[3]):
                best = line
        if best:
            print(f"| **{m} best** | {best[0]} | {best[1]} | {best[2]:.3f} | {best[3]:.3f} | {best[4]} |")

    print("\n### By resolution (crowd frame; end to end, median ms; OpenCV WBDetector::detect on the CPU)\n")
    names = models + ["xobjdetect-lfw-face"]
    data = {}
    for m in names:
        p = f"{out}/wb-{tag}-res-{m}.json"
        if os.path.exists(p):
            data[m] = load(p)[1]
    frames = list(next(iter(data.values())).keys()) if data else []
    head = "| frame | " + " | ".join(f"{m} e2e" for m in data) + " | xobjdetect model, WBDetector::detect | ratio |"
    print(head)
    print("|" + "---|" * (len(data) + 3))
    for f in frames:
        cells = [f"{data[m][f]['e2e_median_ms']:.3f}" for m in data]
        x = data.get("xobjdetect-lfw-face", {}).get(f)
        ocv = x["opencv_cpu_ms"] if x else 0
        ratio = f"{ocv / x['e2e_median_ms']:.0f}x" if x and ocv > 0 else "-"
        size = f"{data[names[0]][f]['width']}x{data[names[0]][f]['height']}" if names[0] in data else f
        print(f"| {size} | " + " | ".join(cells) + f" | {ocv:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
