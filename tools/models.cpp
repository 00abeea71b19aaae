// gpudetect-models: every model gpudetect can name without a path, as the
// engine finds it on the model search path (core/models.h): its short name,
// family, window, default label and file.  Each is loaded: the files on the
// search path that do not load (an old-format OpenCV cascade, a damaged
// file) are listed apart, with the reason.
//
//   gpudetect-models [--paths]       --paths: the search path's folders first
#include "core/family.h"
#include "core/models.h"
#include "families/registry.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

using namespace gpudetect;

int main (int argc, char **argv) {
  bool paths = false;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp (argv[i], "--paths") == 0) {
      paths = true;
    } else if (std::strcmp (argv[i], "-h") == 0 || std::strcmp (argv[i], "--help") == 0) {
      std::printf ("usage: %s [--paths]\nLists every model gpudetect finds by name (gpudetect model=NAME).\n",
                   argv[0]);
      return 0;
    } else {
      std::fprintf (stderr, "unknown argument %s (--help)\n", argv[i]);
      return 2;
    }
  }
  if (paths) {
    std::printf ("search path (GPUDETECT_MODEL_PATH first):\n");
    for (const std::string &d : model_search_path ())
      std::printf ("  %s\n", d.c_str ());
    std::printf ("\n");
  }
  std::string unusable;
  std::printf ("%-34s %-10s %-9s %-13s %s\n", "name", "family", "window", "label", "file");
  for (const std::string &name : list_models ()) {
    const std::string path = resolve_model (name);
    std::unique_ptr<Family> f;
    if (Error e = load_family (path, &f)) {
      unusable += "  " + name + " (" + path + "): " + e.message + "\n";
      continue;
    }
    const ModelInfo &m = f->info ();
    const std::string window = std::to_string (m.window.width) + "x" + std::to_string (m.window.height);
    std::printf ("%-34s %-10s %-9s %-13s %s\n", name.c_str (), m.family.c_str (), window.c_str (), m.label.c_str (),
                 path.c_str ());
  }
  if (!unusable.empty ())
    std::printf ("\nfiles on the search path that do not load:\n%s", unusable.c_str ());
  return 0;
}
