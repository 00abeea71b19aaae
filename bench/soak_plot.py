#!/usr/bin/env python3
"""RSS curve of a gpudetect-soak CSV as a small SVG (no dependencies).

    bench/soak_plot.py soak.csv docs/soak-rss.svg [--title TEXT]
"""
import argparse
import csv


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('csv')
    ap.add_argument('svg')
    ap.add_argument('--title', default='gpudetect ! roioverlay: resident memory')
    a = ap.parse_args()
    with open(a.csv) as f:
        rows = [r for r in csv.DictReader(f)]
    xs = [int(r['frames']) for r in rows]
    ys = [int(r['rss_kib']) / 1024 for r in rows]
    w, h, ml, mr, mt, mb = 640, 320, 70, 20, 40, 50
    x1 = max(xs) or 1
    y1 = max(ys) * 1.1
    px = lambda x: ml + (w - ml - mr) * x / x1
    py = lambda y: h - mb - (h - mt - mb) * y / y1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="12"><rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{a.title}</text>']
    for i in range(6):
        y = y1 * i / 5
        out.append(f'<line x1="{ml}" x2="{w - mr}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{ml - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.0f}</text>')
    for i in range(6):
        x = x1 * i / 5
        out.append(f'<text x="{px(x):.1f}" y="{h - mb + 18}" text-anchor="middle">{x:.0f}</text>')
    out.append(f'<line x1="{ml}" x2="{w - mr}" y1="{h - mb}" y2="{h - mb}" stroke="black"/>')
    out.append(f'<line x1="{ml}" x2="{ml}" y1="{mt}" y2="{h - mb}" stroke="black"/>')
    pts = ' '.join(f'{px(x):.1f},{py(y):.1f}' for x, y in zip(xs, ys))
    out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    out.append(f'<text x="{(ml + w - mr) / 2}" y="{h - 10}" text-anchor="middle">frames</text>')
    out.append(f'<text x="16" y="{(mt + h - mb) / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(mt + h - mb) / 2})">RSS (MiB)</text>')
    out.append('</svg>')
    with open(a.svg, 'w') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
