#!/usr/bin/python3
"""Turns gpudetect-bench --json files into a Markdown table and a PNG plot.

    bench/bench_report.py OUT.png BENCH.json... > table.md

Needs python3-matplotlib for the plot.
"""
import json
import os
import sys


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        model = os.path.basename(d['model']).replace('.xml', '')
        for r in d['results']:
            r['model'] = model
            r['device'] = d['device']
            r['source'] = os.path.basename(p)
            runs.append(r)
    return runs


def host(r):
    # files written before the host split was measured lack these fields
    if 'enqueue_ms' not in r:
        return '—'
    return f"{r['enqueue_ms']:.3f} / {r['wait_ms']:.3f} / {r['collect_ms']:.3f}"


def pageable(r):
    return f"{r['e2e_pageable_median_ms']:.3f}" if 'e2e_pageable_median_ms' in r else '—'


def phases(r):
    """The family's phases, name and median ms; older results files have the cascade's fixed columns."""
    if 'phases_ms' in r:
        return ', '.join(f"{k} {v:.3f}" for k, v in r['phases_ms'].items())
    return ', '.join(f"{k} {r[k + '_ms']:.3f}" for k in ('pyramid', 'tilted', 'integral', 'first', 'later'))


def table(runs):
    head = ('| device | model | frame | objects (OpenCV) | upload | phases | readback '
            '| device total | e2e median | e2e p95 | host: enqueue / wait / collect | e2e, ordinary memory | pipelined '
            '| launches | syncs | OpenCV CPU | OpenCV UMat | × CPU | × UMat |')
    lines = [head, '|' + '---|' * (head.count('|') - 1)]
    for r in runs:
        dev = r['device'].split(':', 1)[-1].split('(')[0].strip()
        cpu = r['opencv_cpu_ms'] / r['e2e_median_ms'] if r['e2e_median_ms'] else 0
        umat = r['opencv_umat_ms'] / r['e2e_median_ms'] if r['e2e_median_ms'] else 0
        # no OpenCL in OpenCV on that host: no UMat figure
        umat_ms = f"{r['opencv_umat_ms']:.2f}" if r['opencv_umat_ms'] else '—'
        umat_x = f"{umat:.1f}" if r['opencv_umat_ms'] else '—'
        lines.append(
            f"| {dev} | {r['model']} | {r['frame']} ({r['width']}x{r['height']}) | {r['objects']} ({r['opencv_objects']}) "
            f"| {r['upload_ms']:.3f} | {phases(r)} | {r['readback_ms']:.3f} | {r['device_ms']:.3f} "
            f"| **{r['e2e_median_ms']:.3f}** | {r['e2e_p95_ms']:.3f} | {host(r)} | {pageable(r)} "
            f"| {r['pipelined_ms']:.3f} | {r['launches']} "
            f"| {r['host_syncs']:.0f} | {r['opencv_cpu_ms']:.2f} | {umat_ms} | {cpu:.1f} | {umat_x} |")
    return '\n'.join(lines)


def plot(runs, out):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    devices = sorted({r['device'].split(':', 1)[-1].split('(')[0].strip() for r in runs})
    fig, axes = plt.subplots(1, len(devices), figsize=(7 * len(devices), 5), squeeze=False)
    for ax, dev in zip(axes[0], devices):
        rs = [r for r in runs if r['device'].split(':', 1)[-1].split('(')[0].strip() == dev]
        labels = [f"{r['model'].replace('cascade_frontalface', '').strip('_')}\n{r['frame'].replace('.pgm', '')}"
                  for r in rs]
        x = range(len(rs))
        w = 0.28
        ax.bar([i - w for i in x], [r['e2e_median_ms'] for r in rs], w, label='gpudetect (end to end)')
        ax.bar(list(x), [r['opencv_cpu_ms'] for r in rs], w, label='OpenCV CPU (all threads)')
        ax.bar([i + w for i in x], [r['opencv_umat_ms'] for r in rs], w, label='OpenCV UMat')
        ax.set_yscale('log')
        ax.set_ylabel('ms per frame (median)')
        ax.set_title(dev)
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=7, rotation=30, ha='right')
        ax.legend(fontsize=8)
        ax.grid(axis='y', which='both', alpha=0.3)
    fig.suptitle('Cascade detection per frame, scale 1.1, 3 neighbours, min 24 (lower is better)')
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs = load(sys.argv[2:])
    print(table(runs))
    plot(runs, sys.argv[1])
