#!/usr/bin/env python3
"""Writes the cascade seed corpus (tests/fuzz/corpus/cascade-xml/ and, with the
other formats' seeds, corpus/registry/): OpenCV's cascades from Debian's
opencv-data cut down to their first stages and the features those use, so that
each seed stays a valid model of a few KB.

    make_cascade_seeds.py OUTDIR [OPENCV_DATA_DIR]
"""
import os
import sys
import xml.etree.ElementTree as ET

SRC = sys.argv[2] if len(sys.argv) > 2 else '/usr/share/opencv4'
# (file, stages kept, what it covers)
CUTS = [
    ('haarcascades/haarcascade_frontalface_default.xml', 2, 'Haar stumps'),
    ('haarcascades/haarcascade_frontalface_alt2.xml', 1, 'Haar trees of 2 nodes'),
    ('haarcascades/haarcascade_upperbody.xml', 1, 'tilted Haar features'),
    ('haarcascades/haarcascade_eye_tree_eyeglasses.xml', 1, 'Haar trees'),
    ('lbpcascades/lbpcascade_frontalface_improved.xml', 2, 'LBP stumps'),
    ('lbpcascades/lbpcascade_silverware.xml', 1, 'LBP, a non-square window'),
]


def cut(path, keep):
    root = ET.parse(path).getroot()
    casc = root[0]
    stages = casc.find('stages')
    for st in list(stages)[keep:]:
        stages.remove(st)
    features = list(casc.find('features'))
    used, remap = [], {}
    for node in stages.iter('internalNodes'):
        t = node.text.split()
        step = 11 if casc.findtext('featureType').strip() == 'LBP' else 4
        for i in range(0, len(t), step):
            f = int(t[i + 2])
            if f not in remap:
                remap[f] = len(used)
                used.append(features[f])
            t[i + 2] = str(remap[f])
        node.text = ' '.join(t)
    for st in stages:
        st.find('maxWeakCount').text = str(len(list(st.find('weakClassifiers'))))
    casc.find('stageNum').text = str(len(list(stages)))
    fs = casc.find('features')
    for f in list(fs):
        fs.remove(f)
    for f in used:
        fs.append(f)
    for e in root.iter():
        if e.text and not e.text.strip():
            e.text = None
        e.tail = None
        if e.text:
            e.text = ' '.join(e.text.split())
    return b'<?xml version="1.0"?>\n' + ET.tostring(root) + b'\n'


def old_format(path):
    """The first stage of an old-format (opencv-haar-classifier) cascade: refused with a message."""
    root = ET.parse(path).getroot()
    stages = root[0].find('stages')
    for st in list(stages)[1:]:
        stages.remove(st)
    return b'<?xml version="1.0"?>\n' + ET.tostring(root) + b'\n'


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for f, keep, _ in CUTS:
        name = os.path.basename(f).replace('.xml', '') + '-%dstage.xml' % keep
        with open(os.path.join(out, name), 'wb') as o:
            o.write(cut(os.path.join(SRC, f), keep))
    with open(os.path.join(out, 'haarcascade_licence_plate_rus_16stages-old-format.xml'), 'wb') as o:
        o.write(old_format(os.path.join(SRC, 'haarcascades/haarcascade_licence_plate_rus_16stages.xml')))


if __name__ == '__main__':
    main()
