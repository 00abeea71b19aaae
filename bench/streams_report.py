#!/usr/bin/python3
"""Turns the JSON files of bench/run-streams-benchmarks.sh (gpudetect-bench-streams
and gpudetect-bench-pipelines) into the Markdown tables of docs/streams.md and a
PNG plot of aggregate frames per second against the number of streams.

    bench/streams_report.py OUT.png FILE.json... > tables.md

Needs python3-matplotlib for the plot (the tables are written without it).
"""
import json
import math
import os
import sys


def short_device(name):
    if name.startswith('Portable Computing Language') or 'pthread' in name:
        cus = name.split(' CUs')[0].rsplit(', ', 1)[-1] if ' CUs' in name else '?'
        return f'PoCL, {cus} CPU cores'
    if ':' in name:
        name = name.split(':', 1)[1]
    return name.split('(')[0].strip()


def short_model(path):
    base = os.path.basename(path.split(' (')[0])
    return {'lbpcascade_frontalface_improved.xml': 'LBP-improved', 'lbp-frontalface-improved': 'LBP-improved',
            'haarcascade_frontalface_default.xml': 'Haar-default',
            'haar-frontalface-default': 'Haar-default'}.get(base, base)


def load(paths):
    engine, pipes = [], []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        name = os.path.basename(p)
        if 'clip' in d:
            for r in d['runs']:
                r.update(file=name, detect=d['detect'], model=short_model(d['model']) if d['detect'] else '—',
                         width=d['width'], height=d['height'], run=name.split('-pipelines')[0])
                pipes.append(r)
            continue
        for r in d['runs']:
            r.update(file=name, device=short_device(d['device']), model=short_model(d['model']),
                     label=d.get('label', ''), tuning=d['tuning'], slots=d['slots'], rate=d['rate'],
                     threads_opt=d['threads'], mem=d.get('memory_source', 'none'), width=d['width'],
                     height=d['height'])
            engine.append(r)
    return engine, pipes


def variant(r):
    """What a run changed from the defaults, in words."""
    parts = []
    if r['tuning']:
        parts.append(f"`{r['tuning']}`")
    if r['threads_opt']:
        parts.append(f"{r['threads_opt']} threads")
    if r['slots'] != 2:
        parts.append(f"{r['slots']} in flight")
    if 'connections' in r['label']:
        parts.append('CUDA_DEVICE_MAX_CONNECTIONS=32')
    if r.get('profile'):
        parts.append('profiling queues')
    return ', '.join(parts) or 'default'


def per_count(r):
    return r['label'].rsplit('-n', 1)[-1].isdigit() if '-n' in r['label'] else False


def fps(v):
    return f'{v:.1f}' if v < 100 else f'{v:.0f}'


def mib(v):
    return '—' if v is None or v < 0 else f'{v:.1f}'


def engine_table(runs):
    rows = [r for r in runs if r['rate'] == 0 and (per_count(r) or not r['label'])]
    if not rows:
        return ''
    out = ['| device | model | streams | frames/s, all streams | per stream | latency p50 (ms) | p95 median / worst '
           '(ms) | worst p95 in frame intervals | host cores busy | host MiB per stream | device MiB per stream '
           '| builds | wrong or failed frames | streams without a frame |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=lambda r: (r['device'], r['model'], r['streams'])):
        out.append(f"| {r['device']} | {r['model']} | {r['streams']} | **{fps(r['aggregate_fps'])}** | "
                   f"{r['per_stream_fps']:.2f} | {r['latency_p50_ms']:.2f} | {r['latency_p95_median_ms']:.2f} / "
                   f"{r['latency_p95_max_ms']:.2f} | {r['latency_p95_max_ms'] / r['interval_ms']:.2f} | "
                   f"{r['host_cores']:.2f} | {mib(r['rss_per_stream_mib'])} | {mib(r['device_per_stream_mib'])} | "
                   f"{r['program_builds']} | {r['mismatches'] + r['errors']} | {r.get('starved', '—')} |")
    return '\n'.join(out) + '\n'


def variants_table(runs):
    rows = [r for r in runs if r['rate'] == 0 and r['label'] and not per_count(r)]
    if not rows:
        return ''
    out = ['| device | model | variant | streams | frames/s, all streams | latency p50 (ms) | worst p95 (ms) | '
           'host cores busy | device time per second | launches per second | wrong or failed frames |',
           '|---|---|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=lambda r: (r['device'], r['model'], r['streams'], -r['aggregate_fps'])):
        prof = f"{r['device_busy']:.2f} | {r['launches_per_s']:.0f}" if r.get('profile') else '— | —'
        out.append(f"| {r['device']} | {r['model']} | {variant(r)} | {r['streams']} | **{fps(r['aggregate_fps'])}** | "
                   f"{r['latency_p50_ms']:.2f} | {r['latency_p95_max_ms']:.2f} | {r['host_cores']:.2f} | {prof} | "
                   f"{r['mismatches'] + r['errors']} |")
    return '\n'.join(out) + '\n'


def cameras_table(runs):
    rows = [r for r in runs if r['rate'] > 0]
    if not rows:
        return ''
    out = ['| device | model | cameras | offered frames/s | delivered | latency p50 (ms) | p95 median / worst (ms) '
           '| worst p95 in camera frame intervals | host cores busy |',
           '|---|---|---|---|---|---|---|---|---|']
    for r in sorted(rows, key=lambda r: (r['device'], r['model'])):
        out.append(f"| {r['device']} | {r['model']} | {r['streams']} at {r['rate']:.0f}/s | "
                   f"{r['streams'] * r['rate']:.0f} | **{fps(r['aggregate_fps'])}** | {r['latency_p50_ms']:.2f} | "
                   f"{r['latency_p95_median_ms']:.2f} / {r['latency_p95_max_ms']:.2f} | "
                   f"**{r['latency_p95_max_ms'] / r['interval_ms']:.2f}** | {r['host_cores']:.2f} |")
    return '\n'.join(out) + '\n'


def pipelines_table(pipes):
    if not pipes:
        return ''
    out = ['| device | streams | decoding + gpudetect: frames/s | decoding alone: frames/s | ratio | gpudetect latency '
           'p50 / worst p95 (ms) | host cores busy (with / alone) | host MiB per added stream (with) | decoder |',
           '|---|---|---|---|---|---|---|---|---|']
    # One run of bench/run-streams-benchmarks.sh (its files share the name
    # before "-pipelines") pairs the pipelines with and without gpudetect.
    for run in sorted({r['run'] for r in pipes}, key=lambda k: k.endswith('h100')):
        rows = [r for r in pipes if r['run'] == run]
        devices = {r.get('device') for r in rows if r['detect'] and r.get('device')}
        dev = short_device(next(iter(devices))) if devices else '—'
        counts = sorted({r['streams'] for r in rows})
        # Memory per added stream: from the smallest count's run to this one's
        # (the runs follow each other in one process; the first includes the
        # plugin's and the driver's start-up).
        first = next((r for r in rows if r['detect'] and r['streams'] == counts[0]), None)
        for n in counts:
            d = next((r for r in rows if r['streams'] == n and r['detect']), None)
            a = next((r for r in rows if r['streams'] == n and not r['detect']), None)
            ratio = f"{d['aggregate_fps'] / a['aggregate_fps']:.2f}" if d and a and a['aggregate_fps'] else '—'
            out.append(f"| {dev} | {n} | **{fps(d['aggregate_fps'])}** | " if d else f"| {dev} | {n} | — | ")
            out[-1] += f"{fps(a['aggregate_fps'])} | " if a else '— | '
            out[-1] += f"{ratio} | "
            out[-1] += f"{d['latency_p50_ms']:.2f} / {d['latency_p95_max_ms']:.2f} | " if d else '— | '
            out[-1] += (f"{d['host_cores']:.2f} / " if d else '— / ') + (f"{a['host_cores']:.2f} | " if a else '— | ')
            out[-1] += (f"{(d['rss_mib'] - first['rss_mib']) / (n - first['streams']):.1f} | "
                        if d and first and n > first['streams'] else '— | ')
            out[-1] += f"{(d or a)['decoder']} |"
    return '\n'.join(out) + '\n'


def plot(png, engine, pipes):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('no matplotlib: no plot', file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    series = {}
    for r in engine:
        if r['rate'] == 0 and per_count(r):
            series.setdefault(f"{r['device']}, {r['model']}, frames from memory", []).append(
                (r['streams'], r['aggregate_fps']))
    run_device = {r['run']: short_device(r['device']) for r in pipes if r['detect'] and r.get('device')}
    for r in pipes:
        dev = run_device.get(r['run'], '')
        key = f"{dev + ', ' if dev else ''}{r['model']}, 1080p MJPEG decoded" if r['detect'] else \
            f"decoding alone (jpegdec), host of {dev or 'the run'}"
        series.setdefault(key, []).append((r['streams'], r['aggregate_fps']))
    for key, pts in sorted(series.items()):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o', label=key)
    ax.set_xscale('log', base=2)
    ax.set_yscale('log')
    ax.set_xlabel('streams in one process')
    ax.set_ylabel('frames per second, all streams')
    ax.set_title('Many 1080p streams on one device')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    engine, pipes = load(argv[2:])
    for title, text in (('Frames from memory, one process per stream count', engine_table(engine)),
                        ('Variants', variants_table(engine)),
                        ('Cameras at 30 frames/s', cameras_table(engine)),
                        ('With decoding', pipelines_table(pipes))):
        if text:
            print(f'### {title}\n\n{text}')
    plot(argv[1], engine, pipes)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
