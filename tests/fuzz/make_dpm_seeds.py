#!/usr/bin/env python3
"""cv::dpm model files, written as OpenCV's FileStorage writes them
(CascadeModel::serialize): the fuzz seeds of tests/fuzz/corpus/dpm-xml, and
the made test model tests/data/dpm-test.xml.

  make_dpm_seeds.py DIR                 the seeds
  make_dpm_seeds.py --test-model FILE   the test model

The test model has three components of different root sizes (a wide one with
three parts of different sizes, a tall one with two, a root-only one), every
coefficient drawn from a seeded generator; its pruning thresholds are all
-1e30, so that cv::dpm's cascade prunes nothing and reports the full model's
score of every window (its PCA filters then only add and take away the same
terms)."""
import random
import sys


def fmt(v):
    return '%.9g' % v


def matrix(rows, cols, values, indent='\t'):
    out = ['%s<_ type_id="opencv-matrix">' % indent,
           '%s<rows>%d</rows>' % (indent, rows), '%s<cols>%d</cols>' % (indent, cols),
           '%s<dt>d</dt>' % indent, '%s<data>' % indent]
    for r in range(rows):
        out.append(indent + ' '.join(fmt(v) for v in values[r * cols:(r + 1) * cols]))
    out.append('%s</data></_>' % indent)
    return '\n'.join(out)


def model(sbin, interval, pad, comps, threshold, pca_dim=2, seq_children=False, rng=None):
    """comps: [(bias, (rows, cols) root, [((rows, cols), (ax, ay), (d0, d1, d2, d3))], (w0, w1, w2))]"""
    rng = rng or random.Random(1)
    g = lambda n, s: [rng.gauss(0, s) for _ in range(n)]
    x = ['<?xml version="1.0"?>', '<opencv_storage>', '<SBin>%d</SBin>' % sbin,
         '<NumComponents>%d</NumComponents>' % len(comps), '<NumFeatures>32</NumFeatures>',
         '<Interval>%d</Interval>' % interval, '<MaxSizeX>%d</MaxSizeX>' % pad[0], '<MaxSizeY>%d</MaxSizeY>' % pad[1]]
    x.append('<PCAcoeff type_id="opencv-matrix">' + matrix(32, pca_dim, g(32 * pca_dim, 0.2), '')[len('<_ type_id="opencv-matrix">'):-len('</_>')] + '</PCAcoeff>')
    x.append('<PCADim>%d</PCADim>' % pca_dim)
    x.append('<ScoreThreshold>%s</ScoreThreshold>' % fmt(threshold))
    if seq_children:
        x.append('<Bias>' + ''.join('<_>%s</_>' % fmt(c[0]) for c in comps) + '</Bias>')
    else:
        x.append('<Bias>\n%s \n</Bias>' % ' '.join(fmt(c[0]) for c in comps))
    x.append('<RootFilters>')
    for c in comps:
        r, k = c[1]
        x.append(matrix(r, k * 32, g(r * k * 32, 0.05)))
    x.append('</RootFilters>\n<RootPCAFilters>')
    for c in comps:
        r, k = c[1]
        x.append(matrix(r, k * pca_dim, g(r * k * pca_dim, 0.05)))
    x.append('</RootPCAFilters>\n<PartFilters>')
    for c in comps:
        for (r, k), _, _ in c[2]:
            x.append(matrix(r, k * 32, g(r * k * 32, 0.05)))
    x.append('</PartFilters>\n<PartPCAFilters>')
    for c in comps:
        for (r, k), _, _ in c[2]:
            x.append(matrix(r, k * pca_dim, g(r * k * pca_dim, 0.05)))
    x.append('</PartPCAFilters>\n<PrunThreshold>')
    for c in comps:
        x.append('\t<_>\n\t%s \n\t</_>' % ' '.join(['-1e30'] * (4 * len(c[2]) + 4)))
    x.append('</PrunThreshold>\n<Anchor>')
    for c in comps:
        for _, a, _ in c[2]:
            x.append('\t<_>\n\t%s %s \n\t</_>' % (fmt(a[0]), fmt(a[1])))
    x.append('</Anchor>\n<Deformation>')
    for c in comps:
        for _, _, d in c[2]:
            x.append('\t<_>\n\t%s \n\t</_>' % ' '.join(fmt(v) for v in d))
    x.append('</Deformation>\n<NumParts>\n%s \n</NumParts>\n<PartOrder>' % ' '.join('%d.000000' % len(c[2]) for c in comps))
    for c in comps:
        order = [0] + list(range(1, len(c[2]) + 1))
        x.append('\t<_>\n\t%s \n\t</_>' % ' '.join('%d.000000' % v for v in order + order))
    x.append('</PartOrder>\n<LocationWeight>')
    for c in comps:
        x.append('\t<_>\n\t%s \n\t</_>' % ' '.join(fmt(v) for v in c[3]))
    x.append('</LocationWeight>\n</opencv_storage>\n')
    return '\n'.join(x)


def test_model():
    rng = random.Random(20240611)
    comps = [
        (-0.2, (4, 6), [((3, 3), (2, 1), (0.05, 0.01, 0.04, -0.01)),
                        ((2, 4), (6, 0), (0.03, -0.02, 0.06, 0.0)),
                        ((4, 2), (9, 3), (0.08, 0.0, 0.02, 0.01))], (0.0, -0.1, 0.1)),
        (0.1, (8, 4), [((4, 4), (1, 2), (0.04, 0.0, 0.04, 0.0)),
                       ((3, 3), (3, 11), (0.02, 0.01, 0.05, -0.02))], (0.0, 0.05, -0.05)),
        (0.0, (5, 5), [], (0.0, 0.0, 0.2)),
    ]
    return model(8, 4, (6, 8), comps, 0.45, rng=rng)


def seeds(d):
    tiny = [(0.0, (1, 1), [((1, 1), (0, 0), (0.1, 0.0, 0.1, 0.0))], (0.0, 0.0, 0.0))]
    files = {
        'tiny-1comp.xml': model(8, 2, (1, 1), tiny, -0.5),
        'two-comp-children.xml': model(4, 3, (2, 3), tiny + [(0.5, (2, 1), [], (0.1, 0.2, 0.3))], 0.0,
                                       seq_children=True),
        'root-only.xml': model(8, 5, (3, 3), [(-1.0, (3, 2), [], (0.0, -0.1, 0.1))], -1.0),
        'dt-f.xml': model(8, 2, (1, 1), tiny, -0.5).replace('<dt>d</dt>', '<dt>f</dt>', 1),
        'odd-sbin.xml': model(7, 2, (1, 1), tiny, -0.5),
    }
    for name, text in files.items():
        with open(d + '/' + name, 'w') as f:
            f.write(text)


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--test-model':
        with open(sys.argv[2], 'w') as f:
            f.write(test_model())
    elif len(sys.argv) == 2:
        seeds(sys.argv[1])
    else:
        sys.exit(__doc__)
